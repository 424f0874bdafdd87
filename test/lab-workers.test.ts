// Worker lab hosts (`lab up --workers`) run Pods: containerd 2.3.3 + runc 1.4.3 + a standalone
// kubelet v1.36.3 on each of two hosts, images built here, nothing pulled. The evidence is read over
// SSH from the hosts (`ctr -n k8s.io containers ls`, `tasks ls`, a ping from one Pod to the other)
// and from this machine's cgroups.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeCgroups, NODE_PREPARE_UNIT } from '../harness/lab/worker.ts';
import { readState, labFiles } from '../harness/lab/state.ts';
import { labDir } from '../harness/lab/plan.ts';
import type { Session } from '../core/transport/index.ts';
import { remote, testLab, type TestLab } from './helpers/lab.ts';
import { BUSYBOX_IMAGE, PAUSE_IMAGE, buildNodeInputs, startStandaloneNode } from './helpers/standalone-node.ts';
import { tempDir } from './helpers/tmp.ts';
import { retry } from '../lib/retry.ts';

const NAME = 'hwtest-workers';
/** One pod CIDR per node, as Kelsey Hightower's guide gives them; routed between nodes over the lab network. */
const podCidr = (i: number) => `10.244.${i + 1}.0/24`;

/** `probe` until it returns a value, with lib/retry's loop; a timeout names what and shows `last`. */
function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>, last: () => Promise<string>): Promise<T> {
  return retry(async () => {
    const v = await probe();
    if (v === undefined) throw new Error('not yet');
    return v;
  }, { timeoutMs, intervalMs: 1000, onTimeout: async () => { throw new Error(`${what} not seen in ${timeoutMs / 1000} s; last:\n${await last()}`); } });
}

interface Node { name: string; address: string; machine: string; s: Session }

/** The busybox container's id on a node, once its task is RUNNING with its sandbox's. */
async function runningBusybox(n: Node): Promise<string> {
  const journal = () => remote(n.s, ['journalctl', '-u', 'kubelet', '-u', 'containerd', '--no-pager', '-n', '30']);
  const id = await until(`[${n.name}] a pause and a busybox container`, 90_000, async () => {
    const out = await remote(n.s, ['ctr', '-n', 'k8s.io', 'containers', 'ls']);
    if (!out.includes(PAUSE_IMAGE)) return undefined;
    return out.split('\n').find((l) => l.includes(BUSYBOX_IMAGE))?.split(/\s+/)[0];
  }, journal);
  await until(`[${n.name}] both tasks RUNNING`, 30_000, async () => {
    const out = await remote(n.s, ['ctr', '-n', 'k8s.io', 'tasks', 'ls']);
    return (out.match(/RUNNING/g) ?? []).length >= 2 && out.includes(id) ? out : undefined;
  }, async () => `${await remote(n.s, ['ctr', '-n', 'k8s.io', 'tasks', 'ls'])}\n${await journal()}`);
  return id;
}

function inPod(n: Node, id: string, execId: string, argv: string[]): Promise<string> {
  return remote(n.s, ['ctr', '-n', 'k8s.io', 'tasks', 'exec', '--exec-id', execId, id, ...argv]);
}

describe('worker lab hosts (lab up --workers)', () => {
  let lab: TestLab;
  const nodes: Node[] = [];

  beforeAll(async () => {
    const inputs = await buildNodeInputs(tempDir('hardwire-worker-images-'));
    lab = await testLab(NAME, 2, { workers: true });
    const state = readState(labFiles(labDir(NAME, lab.stateDir)))!;
    for (const h of state.hosts) nodes.push({ name: h.name, address: h.address, machine: h.machine, s: await lab.ssh(h.name) });
    await Promise.all(nodes.map((n, i) => startStandaloneNode(n.s, n.address, podCidr(i), inputs)));
    // Each node routes the other's pod CIDR to the other's lab address.
    for (const [i, n] of nodes.entries()) {
      for (const [j, o] of nodes.entries()) if (i !== j) await n.s.exec(['ip', 'route', 'replace', podCidr(j), 'via', o.address]);
    }
  });

  afterAll(async () => {
    for (const n of nodes) await n.s.close();
    await lab?.down();
  });

  it('prepares each node: its own cgroups read-write, the kubelet sysctls shadowed, /dev/kmsg, a shared /', async () => {
    for (const { s, name } of nodes) {
      expect(await remote(s, ['systemctl', 'is-active', NODE_PREPARE_UNIT]), name).toBe('active');
      const mounts = await remote(s, ['cat', '/proc/self/mountinfo']);
      for (const c of ['cpu', 'cpuacct', 'cpuset', 'memory', 'devices', 'freezer', 'blkio', 'pids']) {
        expect(mounts, `${name} ${c}`).toMatch(new RegExp(` /sys/fs/cgroup/${c} rw,`));
      }
      expect(await remote(s, ['cat', '/proc/sys/vm/overcommit_memory', '/proc/sys/kernel/panic', '/proc/sys/kernel/panic_on_oops'])).toBe('1\n10\n1');
      expect(await remote(s, ['readlink', '/dev/kmsg'])).toBe('/dev/console');
      expect(mounts.split('\n').find((l) => l.split(' ')[4] === '/')).toMatch(/shared:/);
    }
  });

  it("runs a static Pod on each node: the pause sandbox and the busybox container in ctr's list, RUNNING, read over SSH", async () => {
    for (const n of nodes) {
      await runningBusybox(n);
      // The container's own output, as the kubelet logged it.
      expect(await remote(n.s, ['sh', '-c', 'cat /var/log/pods/default_bb-*/bb/0.log'])).toContain('stdout F started');
      // No image came from a registry: containerd's log has no pull.
      expect(await remote(n.s, ['journalctl', '-u', 'containerd', '--no-pager'])).not.toMatch(/PullImage/);
    }
    // Longer than both nodes' waits, so a Pod that never runs fails with the journal tail, not a bare timeout.
  }, 2 * 125_000);

  it("keeps each node's Pods under its own cgroup on this machine", () => {
    const mems = nodes.map((n) => nodeCgroups(n).find((d) => d.includes('/sys/fs/cgroup/memory/'))!);
    expect(new Set(mems).size).toBe(nodes.length);
    for (const m of mems) expect(existsSync(join(m, 'kubepods', 'besteffort')), m).toBe(true);
  });

  it("a Pod on node1 reaches the Pod on node2 by its address, through the pod CIDR routes", async () => {
    const [a, b] = nodes as [Node, Node];
    const idA = await runningBusybox(a);
    const idB = await runningBusybox(b);
    const addrB = /inet (10\.244\.2\.\d+)\//.exec(await inPod(b, idB, 'addr', ['ip', '-4', 'addr', 'show', 'eth0']))?.[1];
    expect(addrB).toBeDefined();
    const ping = await inPod(a, idA, 'ping', ['ping', '-c', '3', '-W', '2', addrB!]);
    expect(ping).toMatch(/3 packets transmitted, 3 packets received/);
  }, 2 * 125_000);

  it('lab down removes the cgroups the nodes made on this machine', async () => {
    const dirs = nodes.flatMap((n) => nodeCgroups(n));
    expect(dirs.some((d) => existsSync(d))).toBe(true);
    for (const n of nodes) await n.s.close();
    await lab.down();
    for (const d of dirs) expect(existsSync(d), d).toBe(false);
  });
});
