// What a VM lab host costs here (issue 43, "measure first"): builds the VM disk from the lab's Debian
// base plus Debian's kernel (harness/lab/vm.ts), boots it with QEMU (TCG without /dev/kvm) on a tap
// in a network namespace of its own, and prints: the image build, the time from QEMU's start to a
// root shell over SSH, the VM's own systemd-analyze line and cgroup filesystem, and one shell loop
// timed in the VM and on this machine, as a ratio. Needs root. Usage: node scripts/bench-vm.ts [--cpus N] [--mem MiB]
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stderrLogger } from '../lib/log.ts';
import { cacheDir } from '../lib/paths.ts';
import { run } from '../lib/proc.ts';
import { bootVm, qemuArgs, vmImage } from '../harness/lab/vm.ts';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const cpus = arg('--cpus', 2);
const memMiB = arg('--mem', 2048);
const NS = 'hwbench-vm';
const [GW, VM] = ['10.251.0.1', '10.251.0.2'];
const log = stderrLogger();
const step = { step: 'bench-vm' };
const work = mkdtempSync(join(cacheDir(), 'tmp', 'bench-vm-'));
const now = () => Number(process.hrtime.bigint()) / 1e9;
const rows: [string, string][] = [];

const inNs = (argv: string[], allowFail = false) =>
  run('ip', ['netns', 'exec', NS, ...argv], { ...step, allowFail, timeoutMs: 300_000 });
const ssh = (cmd: string, allowFail = false) =>
  inNs(
    [
      'ssh',
      '-q',
      '-o',
      'BatchMode=yes',
      '-o',
      `UserKnownHostsFile=${join(work, 'known_hosts')}`,
      '-o',
      'StrictHostKeyChecking=yes',
      '-o',
      'ConnectTimeout=3',
      '-i',
      join(work, 'key'),
      `root@${VM}`,
      cmd,
    ],
    allowFail,
  );
const LOOP = 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done';

let qemu: ChildProcess | undefined;
try {
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(work, 'key')], step);
  let t = now();
  const vm = await vmImage(
    {
      name: 'vm1',
      address: VM,
      prefix: 24,
      gateway: GW,
      authorizedKey: readFileSync(join(work, 'key.pub'), 'utf8'),
    },
    join(work, 'vm1.img'),
    log,
  );
  rows.push(['VM image (rootfs copy, host identity, mkfs.ext4 -d)', `${(now() - t).toFixed(1)} s`]);
  writeFileSync(join(work, 'known_hosts'), `${VM} ${vm.hostKey}\n`);

  await run('ip', ['netns', 'add', NS], step);
  for (const a of [
    ['link', 'set', 'lo', 'up'],
    ['link', 'add', 'br0', 'type', 'bridge'],
    ['addr', 'add', `${GW}/24`, 'dev', 'br0'],
    ['link', 'set', 'br0', 'up'],
    ['tuntap', 'add', 'tap0', 'mode', 'tap'],
    ['link', 'set', 'tap0', 'master', 'br0'],
    ['link', 'set', 'tap0', 'up'],
  ])
    await run('ip', ['-n', NS, ...a], step);

  const q = qemuArgs({
    vm,
    tap: 'tap0',
    mac: '52:54:00:12:34:56',
    memMiB,
    cpus,
    console: join(work, 'console.log'),
    pidfile: join(work, 'qemu.pid'),
  });
  const booted = await bootVm(q.args, async () => (await ssh('true', true)).code === 0, {
    prefix: ['ip', 'netns', 'exec', NS],
  });
  qemu = booted.proc;
  rows.push([
    `QEMU start to root over SSH (${q.accel}, ${cpus} vCPU, ${memMiB} MiB)`,
    `${booted.seconds.toFixed(1)} s`,
  ]);
  const facts = (await ssh('systemd-analyze | head -n 1; stat -fc %T /sys/fs/cgroup; uname -rm'))
    .stdout;
  const [analyze, cgroupfs, kernel] = facts.trim().split('\n');
  rows.push(
    ['the VM: systemd-analyze', analyze ?? ''],
    ['the VM: /sys/fs/cgroup', cgroupfs ?? ''],
    ['the VM: kernel', kernel ?? ''],
  );

  t = now();
  await ssh(LOOP);
  const inVm = now() - t;
  t = now();
  await run('sh', ['-c', LOOP], step);
  const here = now() - t;
  rows.push([
    'one shell loop (200,000 steps): VM / this machine',
    `${inVm.toFixed(2)} s / ${here.toFixed(2)} s = ${(inVm / here).toFixed(1)}×`,
  ]);
} finally {
  qemu?.kill('SIGKILL');
  await run('ip', ['netns', 'del', NS], { ...step, allowFail: true });
  rmSync(work, { recursive: true, force: true });
}
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
for (const [k, v] of rows) process.stdout.write(`${k.padEnd(58)} ${v}\n`);
process.stdout.write(`${'load average at the end'.padEnd(58)} ${load}\n`);
