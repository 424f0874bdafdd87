// A QEMU VM (TCG without a usable KVM) joins a wired lab as one more worker (issue 43's figures): the
// lab's Debian base plus Debian's kernel (harness/lab/vm.ts), on a tap on the lab's bridge at a free
// lab address, root's key and its pinned host key from the lab's files. Then `hardwire wire` with the
// lab's inventory plus that host, and the figures: boot to SSH, the wire, the Node's Ready and the
// probe Pod's Ready as the API stamps them, the kubelet's cgroup driver (/configz), and the VM's
// /sys/fs/cgroup and ip_forward read on it. At the end the VM is stopped and its Node and Pod deleted.
// Needs root and a wired lab (scripts/run wire). Usage: node scripts/bench-vm-worker.ts [--lab DIR] [--address A]
import type { ChildProcess } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { stderrLogger } from '../lib/log.ts';
import { cacheDir, repoRoot } from '../lib/paths.ts';
import { run } from '../lib/proc.ts';
import { bootVm, qemuArgs, vmImage } from '../harness/lab/vm.ts';

const opt = (name: string, dflt: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1]! : dflt;
};
const lab = resolve(opt('--lab', '.hardwire/lab/lab'));
const state = JSON.parse(readFileSync(join(lab, 'state.json'), 'utf8')) as {
  subnet: string;
  bridge: string;
  bridgeAddress: string;
  prefix: number;
};
const address = opt('--address', state.subnet.replace(/\.0\/\d+$/, '.50'));
const NAME = 'vm1';
const TAP = 'hwvmtap0';
const step = { step: 'bench-vm-worker' };
const work = mkdtempSync(join(cacheDir(), 'tmp', 'bench-vm-worker-'));
const now = () => Date.now() / 1000;
const rows: [string, string][] = [];
const hardwire = (args: string[], allowFail = false) =>
  run(process.execPath, [join(repoRoot, 'cli', 'hardwire.ts'), ...args], {
    ...step,
    allowFail,
    timeoutMs: 1_800_000,
  });
const ssh = (cmd: string, allowFail = false) =>
  run(
    'ssh',
    [
      '-q',
      '-o',
      'BatchMode=yes',
      '-o',
      `UserKnownHostsFile=${join(lab, 'known_hosts')}`,
      '-o',
      'ConnectTimeout=3',
      '-i',
      join(lab, 'id_ed25519'),
      `root@${address}`,
      cmd,
    ],
    { ...step, allowFail },
  );

let qemu: ChildProcess | undefined;
const knownBefore = readFileSync(join(lab, 'known_hosts'), 'utf8');
const inventory = join(work, 'inventory.yaml');
try {
  const vm = await vmImage(
    {
      name: NAME,
      address,
      prefix: state.prefix,
      gateway: state.bridgeAddress,
      authorizedKey: readFileSync(join(lab, 'id_ed25519.pub'), 'utf8'),
    },
    join(work, `${NAME}.img`),
    stderrLogger(),
    12,
  );
  appendFileSync(join(lab, 'known_hosts'), `${address} ${vm.hostKey}\n`);
  await run('ip', ['tuntap', 'add', TAP, 'mode', 'tap'], step);
  await run('ip', ['link', 'set', TAP, 'master', state.bridge], step);
  await run('ip', ['link', 'set', TAP, 'up'], step);
  const q = qemuArgs({
    vm,
    tap: TAP,
    mac: '52:54:00:ab:cd:01',
    memMiB: 3072,
    cpus: 2,
    console: join(work, 'console.log'),
    pidfile: join(work, 'qemu.pid'),
  });
  const booted = await bootVm(q.args, async () => (await ssh('true', true)).code === 0);
  qemu = booted.proc;
  rows.push([
    `QEMU start to root over SSH (${q.accel}, 2 vCPU, 3072 MiB)`,
    `${booted.seconds.toFixed(1)} s`,
  ]);

  const inv = parse(readFileSync(join(lab, 'inventory.yaml'), 'utf8')) as {
    hosts: { name: string; address: string; roles: string[]; ssh?: unknown }[];
  };
  inv.hosts.push({ name: NAME, address, roles: ['worker'], ssh: inv.hosts[0]!.ssh });
  writeFileSync(inventory, stringify(inv));
  let t = now();
  const started = new Date();
  await hardwire(['wire', '--inventory', inventory, '--quiet']);
  rows.push(['hardwire wire with the VM as one more worker', `${(now() - t).toFixed(1)} s`]);

  const kubeconfig = (await hardwire(['kubeconfig', '--inventory', inventory])).stdout.trim();
  const kubectl = join(cacheDir(), 'bin', 'kubectl', 'v1.36.3', 'kubectl');
  const get = async (path: string) =>
    JSON.parse(
      (await run(kubectl, ['--kubeconfig', kubeconfig, 'get', '--raw', path], step)).stdout,
    );
  const readyAt = (o: { status: { conditions: { type: string; lastTransitionTime: string }[] } }) =>
    Date.parse(o.status.conditions.find((c) => c.type === 'Ready')!.lastTransitionTime) / 1000;
  const node = await get(`/api/v1/nodes/${NAME}`);
  const pod = await get(`/api/v1/namespaces/hardwire-probes/pods/probe-${NAME}`);
  const from = started.getTime() / 1000;
  rows.push(
    ['the Node Ready, from the start of the wire', `${(readyAt(node) - from).toFixed(0)} s`],
    ['its probe Pod Ready, from the start of the wire', `${(readyAt(pod) - from).toFixed(0)} s`],
  );
  const configz = await get(`/api/v1/nodes/${NAME}/proxy/configz`);
  rows.push(['the kubelet: cgroupDriver (/configz)', String(configz.kubeletconfig.cgroupDriver)]);
  const facts = (await ssh('stat -fc %T /sys/fs/cgroup; cat /proc/sys/net/ipv4/ip_forward')).stdout;
  const [fs, fwd] = facts.trim().split('\n');
  rows.push(['the VM: /sys/fs/cgroup, ip_forward', `${fs}, ${fwd}`]);
  const cpu = (await run('ps', ['-o', 'pcpu=', '-p', String(qemu.pid)], step)).stdout.trim();
  rows.push(['QEMU, % of one core over its life so far', cpu]);
  await run(kubectl, ['--kubeconfig', kubeconfig, 'delete', 'node', NAME, '--wait=false'], step);
  await run(
    kubectl,
    [
      '--kubeconfig',
      kubeconfig,
      '-n',
      'hardwire-probes',
      'delete',
      'pod',
      `probe-${NAME}`,
      '--force',
      '--grace-period=0',
    ],
    { ...step, allowFail: true },
  );
} finally {
  qemu?.kill('SIGKILL');
  await run('ip', ['link', 'del', TAP], { ...step, allowFail: true });
  writeFileSync(join(lab, 'known_hosts'), knownBefore);
  rmSync(work, { recursive: true, force: true });
}
for (const [k, v] of rows) process.stdout.write(`${k.padEnd(58)} ${v}\n`);
