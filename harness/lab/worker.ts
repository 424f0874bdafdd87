// Worker lab hosts (`lab up --workers`): what a kubelet + containerd + runc need from a
// systemd-nspawn container on this machine, found by hand in docs/workers-spike.md.
//
// - A cgroup of its own in every hierarchy of the machine, below the cgroup of the process that
//   boots it. nspawn joins them before it execs, and its cgroup namespace then roots the node
//   there: the kubelet's /kubepods is …/hardwire-<machine>/kubepods, so two nodes never share one.
// - nspawn options: every capability, the keyring syscalls runc needs, and containerd's and the
//   kubelet's state on bind mounts of this machine's disk (no overlayfs inside the overlay root).
// - Inside, before containerd: the v1 hierarchies mounted again read-write, /dev/kmsg, a shared /,
//   and the kubelet's three sysctls shadowed for this node only (hardwire-node-prepare.service).
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import type { LabHostState } from './state.ts';

/** The unit that makes a node ready for containerd; containerd's unit should Require it and order After it. */
export const NODE_PREPARE_UNIT = 'hardwire-node-prepare.service';

/** A cgroup's path for this machine's process, per hierarchy, from /proc/self/cgroup. */
export function hierarchyDirs(procSelfCgroup: string): string[] {
  const out: string[] = [];
  for (const line of procSelfCgroup.split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line.trim());
    if (!m) continue;
    const [, ctrls, path] = m;
    const mount = ctrls === '' ? 'unified' : ctrls === 'name=systemd' ? 'systemd' : ctrls!;
    out.push(join('/sys/fs/cgroup', mount, path!).replace(/\/$/, ''));
  }
  return out;
}

/** The node's own cgroup in every hierarchy: beside nothing else, below this process's cgroup. */
export function nodeCgroups(
  host: Pick<LabHostState, 'machine'>,
  procSelfCgroup = readFileSync('/proc/self/cgroup', 'utf8'),
): string[] {
  return hierarchyDirs(procSelfCgroup)
    .filter((d) => existsSync(d))
    .map((d) => join(d, `hardwire-${host.machine}`));
}

/** Creates the node's cgroups; returns their cgroup.procs files, which nspawn's PID is written to before it execs. */
export function ensureNodeCgroups(host: Pick<LabHostState, 'machine'>): string[] {
  const dirs = nodeCgroups(host);
  for (const d of dirs) {
    mkdirSync(d, { recursive: true });
    // A v1 cpuset cgroup takes no task until its cpus and mems are set.
    if (existsSync(join(d, 'cpuset.cpus'))) {
      for (const f of ['cpuset.cpus', 'cpuset.mems']) {
        if (readFileSync(join(d, f), 'utf8').trim() === '')
          writeFileSync(join(d, f), readFileSync(join(dirname(d), f)));
      }
    }
  }
  return dirs.map((d) => join(d, 'cgroup.procs'));
}

/** rmdir bottom-up: a cgroup directory goes only once it has no children and no tasks. */
function removeTree(dir: string): void {
  for (const e of readdirSync(dir, { withFileTypes: true }))
    if (e.isDirectory()) removeTree(join(dir, e.name));
  rmdirSync(dir);
}

/**
 * Removes the node's cgroups (its Pods' included). Call once the node is powered off; a cgroup
 * whose last task has just exited can stay busy for a moment, so EBUSY is retried for up to 5 s.
 */
export async function removeNodeCgroups(host: Pick<LabHostState, 'machine'>): Promise<string[]> {
  const removed: string[] = [];
  for (const d of nodeCgroups(host)) {
    if (!existsSync(d) || !statSync(d).isDirectory()) continue;
    for (let tries = 0; ; tries++) {
      try {
        removeTree(d);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EBUSY' || tries >= 50) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    removed.push(d);
  }
  return removed;
}

/** Where the node's containerd and kubelet state live on this machine's disk, beside its upper dir. */
export function nodeStateDirs(host: Pick<LabHostState, 'upper'>): {
  containerd: string;
  kubelet: string;
} {
  const base = dirname(host.upper);
  return { containerd: join(base, 'containerd'), kubelet: join(base, 'kubelet') };
}

/** The nspawn options a worker adds to a lab host's. */
export function workerNspawnArgs(host: Pick<LabHostState, 'upper'>): string[] {
  const dirs = nodeStateDirs(host);
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true, mode: 0o700 });
  return [
    // CAP_SYS_ADMIN for the cgroup mounts and a shared /, CAP_NET_ADMIN for containerd and the CNI bridge.
    '--capability=all',
    // runc joins a fresh session keyring per container; nspawn's seccomp filter refuses keyctl/add_key
    // ("unable to join session keyring: unable to create session key: operation not permitted").
    '--system-call-filter=@keyring',
    // The overlayfs snapshotter on ext4, not on the node's overlay root.
    `--bind=${dirs.containerd}:/var/lib/containerd`,
    `--bind=${dirs.kubelet}:/var/lib/kubelet`,
  ];
}

/**
 * Runs nspawn inside the node's cgroups: a shell writes its own PID into each cgroup.procs, then
 * execs systemd-nspawn (same PID), so nspawn and the container start there.
 */
export function joinCgroupsThenExec(
  procsFiles: string[],
  nspawnArgs: string[],
): { file: string; args: string[] } {
  const script =
    'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 1; shift; n=$((n-1)); done; exec systemd-nspawn "$@"';
  return {
    file: '/bin/sh',
    args: ['-c', script, 'hardwire-node', String(procsFiles.length), ...procsFiles, ...nspawnArgs],
  };
}

/** The script behind NODE_PREPARE_UNIT; each step says which error it prevents (docs/workers-spike.md). */
export const NODE_PREPARE_SCRIPT = `#!/bin/sh
# Written by hardwire (lab/worker.ts) on worker lab hosts: makes this systemd-nspawn container able
# to run containerd, runc and a kubelet. Idempotent.
set -e
if [ "\${1:-}" = stop ]; then
  for f in $(find /sys/fs/cgroup/pids/kubepods -name cgroup.procs 2>/dev/null); do
    for p in $(cat "$f"); do kill -9 "$p" 2>/dev/null || true; done
  done
  exit 0
fi
# nspawn mounts the v1 hierarchies read-only, and the same hierarchy cannot be mounted on top of
# itself ("cgroup already mounted on ..."): unmount each and mount it again read-write. The cgroup
# namespace roots it at this node's own cgroup on the machine.
for c in cpu cpuacct cpuset memory devices freezer blkio pids; do
  if grep -q " /sys/fs/cgroup/$c ro," /proc/self/mountinfo; then
    umount "/sys/fs/cgroup/$c"
    mount -t cgroup -o "nosuid,nodev,noexec,$c" cgroup "/sys/fs/cgroup/$c"
  fi
done
# The kubelet's OOM watcher reads /dev/kmsg; nspawn gives none. As kind does.
[ -e /dev/kmsg ] || ln -s /dev/console /dev/kmsg
# The kubelet's volume mounts must propagate into containers.
mount --make-rshared /
# The kubelet writes vm.overcommit_memory=1, kernel.panic=10, kernel.panic_on_oops=1 unless they
# already read so, and fails on the read-only /proc/sys. They are global (not namespaced): writing
# them would change the shared machine. Shadow each, in this node only, with the value it expects.
mkdir -p /run/hardwire-sysctl
for kv in vm/overcommit_memory=1 kernel/panic=10 kernel/panic_on_oops=1; do
  k=\${kv%%=*}; f=/run/hardwire-sysctl/$(echo "$k" | tr / .)
  echo "\${kv#*=}" > "$f"
  grep -q " /proc/sys/$k " /proc/self/mountinfo || mount --bind -o ro "$f" "/proc/sys/$k"
done
`;

export const NODE_PREPARE_SERVICE = `[Unit]
Description=hardwire: writable cgroup v1 hierarchies, /dev/kmsg, shared /, kubelet sysctls (lab/worker.ts)
DefaultDependencies=no
After=local-fs.target
Before=multi-user.target shutdown.target containerd.service kubelet.service
Conflicts=shutdown.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/sbin/hardwire-node-prepare
# At shutdown (after containerd and the kubelet stopped, being ordered after this unit): Pods' processes
# sit in the kubelet's cgroups, outside systemd's units, and a Pod's PID 1 ignores SIGTERM. Without this,
# systemd waits 90 s for them ("Waiting for process: 645 (sh)") before it halts.
ExecStop=/usr/local/sbin/hardwire-node-prepare stop

[Install]
WantedBy=multi-user.target
`;

/** Writes the prepare script and its enabled unit into a powered-off host's upper dir. */
export function prepareWorkerUpper(host: Pick<LabHostState, 'upper'>): void {
  const up = host.upper;
  const put = (rel: string, text: string, mode: number) => {
    const f = join(up, rel);
    mkdirSync(dirname(f), { recursive: true });
    writeFileSync(f, text, { mode });
  };
  put('usr/local/sbin/hardwire-node-prepare', NODE_PREPARE_SCRIPT, 0o755);
  put(`etc/systemd/system/${NODE_PREPARE_UNIT}`, NODE_PREPARE_SERVICE, 0o644);
  const wants = join(up, 'etc', 'systemd', 'system', 'multi-user.target.wants');
  mkdirSync(wants, { recursive: true });
  const link = join(wants, NODE_PREPARE_UNIT);
  // lstat: the link's target is a path inside the node, which does not resolve here.
  if (!lstatSync(link, { throwIfNoEntry: false }))
    symlinkSync(`/etc/systemd/system/${NODE_PREPARE_UNIT}`, link);
}
