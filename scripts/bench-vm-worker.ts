// A VM worker's figures on this machine (issue 43), through the product's own path: `hardwire lab up
// --vm-workers 1` (one container: etcd, control plane, worker; one QEMU VM worker, TCG without a
// usable KVM), then `hardwire wire`. Prints: the lab's boot, the wire, the VM's Node Ready and its
// probe Pod Ready as the API stamps them (from the start of the wire), the kubelets' cgroup drivers
// (/configz), QEMU's CPU. The lab is its own ("vmb") and is taken down at the end.
// Needs root and the setup (scripts/setup.sh). Usage: node scripts/bench-vm-worker.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir, repoRoot } from '../lib/paths.ts';
import { run } from '../lib/proc.ts';

const NAME = 'vmb';
const step = { step: 'bench-vm-worker' };
const state = mkdtempSync(join(cacheDir(), 'tmp', 'bench-vm-worker-'));
const env = { ...process.env, HARDWIRE_STATE: state };
const hardwire = (args: string[]) =>
  run(process.execPath, [join(repoRoot, 'cli', 'hardwire.ts'), ...args], {
    ...step,
    env,
    timeoutMs: 1_800_000,
  });
const now = () => Date.now() / 1000;
const rows: [string, string][] = [];
try {
  let t = now();
  const up = JSON.parse(
    (
      await hardwire([
        'lab',
        'up',
        '--name',
        NAME,
        '--hosts',
        '1',
        '--workers',
        '--vm-workers',
        '1',
        '--json',
        '--quiet',
      ])
    ).stdout,
  ) as { inventory: string };
  rows.push([
    'lab up: 1 container + 1 VM worker, to SSH and systemd up',
    `${(now() - t).toFixed(1)} s`,
  ]);
  const started = now();
  t = now();
  await hardwire(['wire', '--inventory', up.inventory, '--quiet']);
  rows.push(['hardwire wire (the container wired too)', `${(now() - t).toFixed(1)} s`]);
  const kubeconfig = (await hardwire(['kubeconfig', '--inventory', up.inventory])).stdout.trim();
  const kubectl = join(cacheDir(), 'bin', 'kubectl', 'v1.36.3', 'kubectl');
  const get = async (path: string) =>
    JSON.parse(
      (await run(kubectl, ['--kubeconfig', kubeconfig, 'get', '--raw', path], step)).stdout,
    );
  const readyAt = (o: { status: { conditions: { type: string; lastTransitionTime: string }[] } }) =>
    Date.parse(o.status.conditions.find((c) => c.type === 'Ready')!.lastTransitionTime) / 1000;
  const node = await get('/api/v1/nodes/vm1');
  const pod = await get('/api/v1/namespaces/hardwire-probes/pods/probe-vm1');
  rows.push(
    ['vm1 Node Ready, from the start of the wire', `${(readyAt(node) - started).toFixed(0)} s`],
    ['its probe Pod Ready, from the start of the wire', `${(readyAt(pod) - started).toFixed(0)} s`],
  );
  for (const n of ['vm1', 'node1']) {
    const c = await get(`/api/v1/nodes/${n}/proxy/configz`);
    rows.push([
      `${n}: the kubelet's cgroupDriver (/configz)`,
      String(c.kubeletconfig.cgroupDriver),
    ]);
  }
  const pid = (
    await run('pgrep', ['-f', `qemu-system-x86_64.*${NAME}`], { ...step, allowFail: true })
  ).stdout
    .trim()
    .split('\n')[0];
  if (pid)
    rows.push([
      'QEMU, % of one core over its life so far',
      (await run('ps', ['-o', 'pcpu=', '-p', pid], step)).stdout.trim(),
    ]);
} finally {
  await run(
    process.execPath,
    [join(repoRoot, 'cli', 'hardwire.ts'), 'lab', 'down', '--name', NAME],
    {
      ...step,
      env,
      allowFail: true,
    },
  );
  rmSync(state, { recursive: true, force: true });
}
for (const [k, v] of rows) process.stdout.write(`${k.padEnd(58)} ${v}\n`);
