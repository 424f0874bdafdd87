// lab/worker.ts without a lab: which cgroups a worker gets, and how nspawn is started in them.
import { describe, expect, it } from 'vitest';
import {
  hierarchyDirs,
  joinCgroupsThenExec,
  nodeCgroups,
  workerNspawnArgs,
} from '../harness/lab/worker.ts';
import { hostRoles } from '../harness/lab/prepare.ts';
import { validateDedicatedWorkers } from '../harness/lab/plan.ts';
import { execFileSync } from 'node:child_process';
import { writeFileSync, readFileSync } from 'node:fs';
import { tempDir } from './helpers/tmp.ts';
import { join } from 'node:path';

const HYBRID = [
  '9:name=systemd:/',
  '8:pids:/',
  '5:devices:/',
  '4:memory:/process_api/c0fc',
  '2:cpuacct:/',
  '1:cpu:/',
  '0::/',
  '',
].join('\n');

describe('worker lab hosts (pure)', () => {
  it("maps /proc/self/cgroup to each hierarchy's directory, the unified one and name=systemd included", () => {
    expect(hierarchyDirs(HYBRID)).toEqual([
      '/sys/fs/cgroup/systemd',
      '/sys/fs/cgroup/pids',
      '/sys/fs/cgroup/devices',
      '/sys/fs/cgroup/memory/process_api/c0fc',
      '/sys/fs/cgroup/cpuacct',
      '/sys/fs/cgroup/cpu',
      '/sys/fs/cgroup/unified',
    ]);
  });

  it('names the node after its machine, below the cgroup of the process that boots it', () => {
    const dirs = nodeCgroups({ machine: 'hw-abc-node1' }, HYBRID);
    for (const d of dirs) expect(d.endsWith('/hardwire-hw-abc-node1')).toBe(true);
  });

  it('adds every capability, the keyring syscalls and two bind mounts on the disk beside the upper dir', () => {
    const dir = tempDir('hardwire-worker-');
    const args = workerNspawnArgs({ upper: join(dir, 'upper') });
    expect(args).toEqual([
      '--capability=all',
      '--system-call-filter=@keyring',
      `--bind=${dir}/containerd:/var/lib/containerd`,
      `--bind=${dir}/kubelet:/var/lib/kubelet`,
    ]);
  });

  it('the shell writes its own PID into each cgroup.procs, then execs nspawn with the arguments untouched', () => {
    const dir = tempDir('hardwire-worker-');
    const procs = [join(dir, 'a'), join(dir, 'b')];
    for (const p of procs) writeFileSync(p, '');
    const { file, args } = joinCgroupsThenExec(procs, ['--quiet', 'arg with space']);
    // Swap nspawn for a stand-in that prints its PID and arguments.
    const script = args[1]!.replace(
      'exec systemd-nspawn',
      () => 'exec sh -c \'echo $$; printf "%s|" "$@"\' x',
    );
    const out = execFileSync(file, [args[0]!, script, ...args.slice(2)])
      .toString()
      .split('\n');
    for (const p of procs) expect(readFileSync(p, 'utf8').trim()).toBe(out[0]);
    expect(out[1]).toBe('--quiet|arg with space|');
  });
});

describe("dedicated workers (pure): compare's hardwire lab is node1 etcd + control plane, node2 worker only", () => {
  const hosts = (n: number, jump = 0) =>
    Array.from({ length: n }, (_, i) => (i >= n - jump ? { jump: '10.0.0.1' } : {}));
  it('gives the last N hosts the worker role only and the others etcd + control plane with no kubelet', () => {
    const state = { hosts: hosts(2), workers: true, dedicatedWorkers: 1 } as Parameters<
      typeof hostRoles
    >[0];
    expect([0, 1].map((i) => hostRoles(state, i))).toEqual([['etcd', 'control-plane'], ['worker']]);
    // Without dedicated workers every host of a --workers lab is all three; without --workers none is a worker.
    expect(
      [0, 1, 2].map((i) =>
        hostRoles({ hosts: hosts(3), workers: true } as Parameters<typeof hostRoles>[0], i),
      ),
    ).toEqual(Array(3).fill(['etcd', 'control-plane', 'worker']));
    expect(hostRoles({ hosts: hosts(3, 1) } as Parameters<typeof hostRoles>[0], 2)).toEqual([
      'etcd',
    ]);
  });

  it('refuses a count that leaves no control plane, one without --workers and one with --inner, each on one line naming --dedicated-workers', () => {
    expect(() => validateDedicatedWorkers(1, 2, true, 0)).not.toThrow();
    for (const [d, h, w, inner, msg] of [
      [2, 2, true, 0, /from 0 to 1/],
      [1, 2, false, 0, /needs --workers/],
      [1, 3, true, 1, /--inner/],
      [0.5, 2, true, 0, /whole number/],
    ] as const) {
      expect(() => validateDedicatedWorkers(d, h, w, inner)).toThrow(msg);
      try {
        validateDedicatedWorkers(d, h, w, inner);
      } catch (err) {
        expect((err as Error).message).toMatch(/^--dedicated-workers: [^\n]+$/);
      }
    }
  });
});
