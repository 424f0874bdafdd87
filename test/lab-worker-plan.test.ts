// lab/worker.ts without a lab: which cgroups a worker gets, and how nspawn is started in them.
import { describe, expect, it } from 'vitest';
import { hierarchyDirs, joinCgroupsThenExec, nodeCgroups, workerNspawnArgs } from '../harness/lab/worker.ts';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const HYBRID = [
  '9:name=systemd:/', '8:pids:/', '5:devices:/', '4:memory:/process_api/c0fc', '2:cpuacct:/', '1:cpu:/', '0::/', '',
].join('\n');

describe('worker lab hosts (pure)', () => {
  it("maps /proc/self/cgroup to each hierarchy's directory, the unified one and name=systemd included", () => {
    expect(hierarchyDirs(HYBRID)).toEqual([
      '/sys/fs/cgroup/systemd', '/sys/fs/cgroup/pids', '/sys/fs/cgroup/devices', '/sys/fs/cgroup/memory/process_api/c0fc',
      '/sys/fs/cgroup/cpuacct', '/sys/fs/cgroup/cpu', '/sys/fs/cgroup/unified',
    ]);
  });

  it('names the node after its machine, below the cgroup of the process that boots it', () => {
    const dirs = nodeCgroups({ machine: 'hw-abc-node1' }, HYBRID);
    for (const d of dirs) expect(d.endsWith('/hardwire-hw-abc-node1')).toBe(true);
  });

  it('adds every capability, the keyring syscalls and two bind mounts on the disk beside the upper dir', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hardwire-worker-'));
    const args = workerNspawnArgs({ upper: join(dir, 'upper') });
    expect(args).toEqual(['--capability=all', '--system-call-filter=@keyring', `--bind=${dir}/containerd:/var/lib/containerd`, `--bind=${dir}/kubelet:/var/lib/kubelet`]);
  });

  it('the shell writes its own PID into each cgroup.procs, then execs nspawn with the arguments untouched', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hardwire-worker-'));
    const procs = [join(dir, 'a'), join(dir, 'b')];
    for (const p of procs) writeFileSync(p, '');
    const { file, args } = joinCgroupsThenExec(procs, ['--quiet', 'arg with space']);
    // Swap nspawn for a stand-in that prints its PID and arguments.
    const script = args[1]!.replace('exec systemd-nspawn', () => 'exec sh -c \'echo $$; printf "%s|" "$@"\' x');
    const out = execFileSync(file, [args[0]!, script, ...args.slice(2)]).toString().split('\n');
    for (const p of procs) expect(readFileSync(p, 'utf8').trim()).toBe(out[0]);
    expect(out[1]).toBe('--quiet|arg with space|');
  });
});
