// A worker lab host (`lab up --workers`) runs a Pod: containerd 2.3.3 + runc 1.4.3 + a standalone
// kubelet v1.36.3, images built here, nothing pulled. The evidence is read over SSH from the host
// (`ctr -n k8s.io containers ls` and `tasks ls`) and from this machine's cgroups.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeCgroups, NODE_PREPARE_UNIT } from '../lab/worker.ts';
import { readState, labFiles } from '../lab/state.ts';
import { labDir } from '../lab/plan.ts';
import type { Session } from '../transport/index.ts';
import { remote, testLab, type TestLab } from './helpers/lab.ts';
import { BUSYBOX_IMAGE, PAUSE_IMAGE, buildNodeInputs, startStandaloneNode } from './helpers/standalone-node.ts';
import { tempDir } from './helpers/tmp.ts';

const NAME = 'hwtest-workers';

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>, last: () => Promise<string>): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`${what} not seen in ${timeoutMs / 1000} s; last:\n${await last()}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

describe('worker lab host (lab up --workers)', () => {
  let lab: TestLab;
  let s: Session;
  let machine: string;

  beforeAll(async () => {
    const inputs = await buildNodeInputs(tempDir('hardwire-worker-images-'));
    lab = await testLab(NAME, 1, { workers: true });
    machine = readState(labFiles(labDir(NAME, lab.stateDir)))!.hosts[0]!.machine;
    s = await lab.ssh('node1');
    await startStandaloneNode(s, lab.info.hosts[0]!.address, inputs);
  });

  afterAll(async () => {
    await s?.close();
    await lab?.down();
  });

  it('prepares the node: its own cgroups read-write, the kubelet sysctls shadowed, /dev/kmsg, a shared /', async () => {
    expect(await remote(s, ['systemctl', 'is-active', NODE_PREPARE_UNIT])).toBe('active');
    const mounts = await remote(s, ['cat', '/proc/self/mountinfo']);
    for (const c of ['cpu', 'cpuacct', 'cpuset', 'memory', 'devices', 'freezer', 'blkio', 'pids']) {
      expect(mounts, c).toMatch(new RegExp(` /sys/fs/cgroup/${c} rw,`));
    }
    expect(await remote(s, ['cat', '/proc/sys/vm/overcommit_memory', '/proc/sys/kernel/panic', '/proc/sys/kernel/panic_on_oops'])).toBe('1\n10\n1');
    expect(await remote(s, ['readlink', '/dev/kmsg'])).toBe('/dev/console');
    expect(mounts.split('\n').find((l) => l.split(' ')[4] === '/')).toMatch(/shared:/);
  });

  it("runs a static Pod: the pause sandbox and the busybox container in ctr's list, RUNNING, read over SSH", async () => {
    const ls = () => remote(s, ['ctr', '-n', 'k8s.io', 'containers', 'ls']);
    const tasks = () => remote(s, ['ctr', '-n', 'k8s.io', 'tasks', 'ls']);
    const journal = () => remote(s, ['journalctl', '-u', 'kubelet', '-u', 'containerd', '--no-pager', '-n', '30']);
    await until('a pause and a busybox container', 120_000, async () => {
      const out = await ls();
      return out.includes(PAUSE_IMAGE) && out.includes(BUSYBOX_IMAGE) ? out : undefined;
    }, journal);
    const running = await until('both tasks RUNNING', 60_000, async () => {
      const out = await tasks();
      return (out.match(/RUNNING/g) ?? []).length >= 2 ? out : undefined;
    }, async () => `${await tasks()}\n${await journal()}`);
    expect(running).toMatch(/RUNNING/);
    // The container's own output, as the kubelet logged it.
    expect(await remote(s, ['sh', '-c', 'cat /var/log/pods/default_bb-*/bb/0.log'])).toContain('stdout F started');
    // No image came from a registry: containerd's log has no pull.
    expect(await remote(s, ['journalctl', '-u', 'containerd', '--no-pager'])).not.toMatch(/PullImage/);
  });

  it("keeps the node's Pods under its own cgroup on this machine", () => {
    const mem = nodeCgroups({ machine }).find((d) => d.includes('/sys/fs/cgroup/memory/'))!;
    expect(existsSync(join(mem, 'kubepods'))).toBe(true);
    expect(existsSync(join(mem, 'kubepods', 'besteffort'))).toBe(true);
  });

  it('lab down removes the cgroups the node made on this machine', async () => {
    const dirs = nodeCgroups({ machine });
    expect(dirs.some((d) => existsSync(d))).toBe(true);
    await s.close();
    await lab.down();
    for (const d of dirs) expect(existsSync(d), d).toBe(false);
  });
});
