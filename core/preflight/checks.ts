// Preflight's checks, pure: a host's reading (read.ts) in, one result per check out. Modeled on
// kubeadm's preflight (KP = k8s.io/kubernetes@v1.36.3/cmd/kubeadm/app/preflight), each citing the
// kubeadm check it follows, or the line in Kubernetes that makes it matter.
import type { Host } from '../inventory/load.ts';
import { componentsOn, specOf } from '../components/registry/index.ts';
import { BACKDATE_MS } from '../pki/issue.ts';
import type { HostReading, Listener } from './read.ts';
import { profileOf } from './profile.ts';
import { UNAME_ARCH } from '../../lib/arch.ts';

export interface CheckResult {
  host: string;
  /** Stable name: swap, ip_forward, port-10250, clock, disk, ... */
  check: string;
  ok: boolean;
  /** What was read. */
  value: string;
  /** When not ok: what is wrong and the fix, in one line. */
  problem?: string;
  /** Wrong now, and wire sets it on this host itself (models/node-kernel.ts), so it does not stop wire. */
  wireSets?: boolean;
  /** The kubeadm check it follows, or where Kubernetes makes it matter. */
  cite: string;
}

/** Worker commands beyond those every host needs (read-scripts.ts HOST_COMMANDS). */
const WORKER_COMMANDS = new Set(['nft', 'mount', 'losetup']);
/** Clock skew allowed: well inside the minutes certificates are backdated (pki/issue.ts BACKDATE_MS). */
export const MAX_SKEW_S = 30;
/** Room for the binaries, images and etcd's first snapshots; kubeadm has no disk check. */
export const MIN_FREE_GIB = 2;
/** The kubelet's default hard eviction threshold for the image filesystem (K pkg/kubelet/eviction/defaults_linux.go:26). */
export const MIN_FREE_PERCENT = 15;
const REQUIRED_V2 = ['cpu', 'memory', 'pids'];
const REQUIRED_V1 = ['cpu', 'cpuacct', 'memory', 'pids'];

/** The process name ss shows for a binary: the kernel's comm, its first 15 characters. */
const comm = (binary: string) => binary.slice(0, 15);

export function checkHost(host: Host, r: HostReading): CheckResult[] {
  const out: CheckResult[] = [];
  // A wrong value wire sets itself on this host is reported as such, not failed.
  const add = (check: string, value: string, cite: string, problem?: string, wireSets?: boolean) =>
    out.push({
      host: host.name,
      check,
      ok: problem === undefined || wireSets === true,
      value,
      cite,
      ...(problem === undefined ? {} : wireSets ? { wireSets: true } : { problem }),
    });
  const p = profileOf(r);
  const worker = host.isWorker;

  add('os', `${r.os}, kernel ${r.kernel}`, 'KP checks_linux.go:50 OSValidator');
  add(
    'arch',
    r.arch,
    'each host gets binaries built for its architecture (lib/arch.ts; core/components/binaries/build.ts GOARCH)',
    UNAME_ARCH[r.arch] !== undefined
      ? undefined
      : `${r.arch}: hardwire builds for ${Object.keys(UNAME_ARCH).join(' and ')} only; wire a host of one of those`,
  );
  add(
    'init',
    r.pid1,
    'every component is a systemd unit (core/render/systemd.ts)',
    r.pid1 === 'systemd'
      ? undefined
      : `PID 1 is "${r.pid1}", not systemd: hardwire runs each component as a systemd unit; boot the host with systemd`,
  );
  if (worker) {
    const [maj = 0, min = 0] = r.kernel.split('.').map((x) => Number.parseInt(x, 10));
    add(
      'kernel',
      r.kernel,
      'K pkg/util/kernel/constants.go:52 NFTablesKubeProxyKernelVersion',
      maj > 5 || (maj === 5 && min >= 13)
        ? undefined
        : `kernel ${r.kernel} is older than 5.13, which kube-proxy's nftables mode needs; upgrade the kernel`,
    );
    const [want, have] =
      p.cgroup === 'v2' ? [REQUIRED_V2, r.controllers] : [REQUIRED_V1, r.v1controllers];
    const lacking = want.filter((c) => !have.includes(c));
    add(
      'cgroups',
      `${p.cgroup} (${have.join(' ')})`,
      'KP checks_linux.go:51 CgroupsValidator',
      lacking.length === 0
        ? undefined
        : `cgroup ${p.cgroup} lacks the ${lacking.join(', ')} controller(s) the kubelet needs; enable them (kernel command line or the parent cgroup's cgroup.subtree_control)`,
    );
    add(
      'swap',
      `${r.swaps} swap area(s) in /proc/swaps`,
      'KP checks.go:685 SwapCheck; the kubelet refuses swap with failSwapOn (K pkg/kubelet/cm/container_manager_linux.go:223)',
      r.swaps === 0
        ? undefined
        : `swap is on (${r.swaps} area(s) in /proc/swaps) and the kubelet refuses to start with it (failSwapOn); run "swapoff -a" and remove it from /etc/fstab`,
    );
    // wire sets the network sysctls where /proc/sys/net is writable (a container's own namespace
    // too), and loads br_netfilter only on a host with its own kernel (models/node-kernel.ts).
    const sets = p.netSysctls;
    add(
      'ip_forward',
      `net.ipv4.ip_forward = ${r.ipForward || '?'}`,
      'KP checks_linux.go:67 FileContentCheck /proc/sys/net/ipv4/ip_forward',
      r.ipForward === '1'
        ? undefined
        : `net.ipv4.ip_forward is ${r.ipForward || 'unreadable'}, so this node would not route Pod traffic, and /proc/sys/net is read-only here so wire cannot set it; set it to 1 where this host's network sysctls are made`,
      sets,
    );
    const loadable = r.bridgeNf !== '' || p.ownKernel;
    add(
      'bridge-nf-call-iptables',
      r.bridgeNf === '' ? 'br_netfilter not loaded' : `= ${r.bridgeNf}`,
      'kubeadm and k0s docs: br_netfilter and net.bridge.bridge-nf-call-iptables = 1 on every node',
      r.bridgeNf === '1'
        ? undefined
        : loadable
          ? `net.bridge.bridge-nf-call-iptables is ${r.bridgeNf || 'absent'}, so Pod-to-Service traffic on one bridge would skip kube-proxy's rules, and wire cannot set it here (/proc/sys/net is read-only); set it to 1`
          : "br_netfilter is not loaded and this host shares its machine's kernel, so wire cannot load it; load br_netfilter on the machine",
      sets && loadable,
    );
    add(
      'overlay',
      r.modules.includes('overlay') ? 'available' : 'not loaded',
      "containerd's overlayfs snapshotter (models/containerd.ts)",
      r.modules.includes('overlay')
        ? undefined
        : "the overlay filesystem is not available, containerd's snapshotter needs it, and this host shares its machine's kernel; load overlay on the machine",
      p.ownKernel,
    );
  }
  if (host.isControlPlane) {
    add(
      'cpus',
      String(r.cpus),
      'KP checks.go:950 NumCPUCheck (ControlPlaneNumCPU = 2)',
      r.cpus >= 2 ? undefined : `${r.cpus} CPU(s); a control-plane host needs at least 2`,
    );
    const mib = Math.floor(r.memKiB / 1024);
    add(
      'memory',
      `${mib} MiB`,
      'KP checks_linux.go:32 MemCheck (ControlPlaneMem = 1700 MB)',
      mib >= 1700 ? undefined : `${mib} MiB of memory; a control-plane host needs at least 1700`,
    );
  }
  const gib = r.diskFreeKiB / 1024 / 1024;
  const pct = (100 * r.diskFreeKiB) / r.diskSizeKiB;
  add(
    'disk',
    `${gib.toFixed(1)} GiB free on /var/lib (${pct.toFixed(0)}%)`,
    `at least ${MIN_FREE_GIB} GiB${worker ? `, and ${MIN_FREE_PERCENT}% (the kubelet's imagefs.available eviction default, K pkg/kubelet/eviction/defaults_linux.go:26)` : ''}`,
    !(gib >= MIN_FREE_GIB)
      ? `${gib.toFixed(1)} GiB free on /var/lib, less than the ${MIN_FREE_GIB} GiB the binaries, images and etcd need; free some space`
      : worker && !(pct >= MIN_FREE_PERCENT)
        ? `${pct.toFixed(0)}% free on /var/lib: below ${MIN_FREE_PERCENT}% the kubelet evicts Pods at once (imagefs.available); free some space`
        : undefined,
  );
  add(
    'clock',
    `${r.skewSeconds >= 0 ? '+' : ''}${r.skewSeconds.toFixed(1)} s from this machine`,
    `certificates are valid from ${BACKDATE_MS / 60_000} min before they are issued here (core/pki/issue.ts)`,
    Math.abs(r.skewSeconds) <= MAX_SKEW_S
      ? undefined
      : `the clock is ${Math.abs(r.skewSeconds).toFixed(0)} s ${r.skewSeconds > 0 ? 'ahead of' : 'behind'} this machine (more than ${MAX_SKEW_S} s): certificates look not yet valid or expired, and etcd peers warn; enable NTP ("timedatectl set-ntp true") or set the clock`,
  );
  const needed = r.missing.filter((c) => worker || !WORKER_COMMANDS.has(c));
  add(
    'commands',
    needed.length === 0 ? 'all present' : `missing ${needed.join(', ')}`,
    'KP checks_linux.go:89-95 InPathCheck',
    needed.length === 0
      ? undefined
      : `${needed.join(', ')} not found in PATH, and wire or a component runs ${needed.length > 1 ? 'them' : 'it'}; install ${needed.length > 1 ? 'them' : 'it'}`,
  );
  for (const c of componentsOn(host)) {
    const spec = specOf(c);
    const own = comm(Object.keys(spec.binaries)[0]!);
    for (const { port, why } of spec.listens) {
      const holders = r.listeners.filter((l) => l.port === port);
      const foreign = holders.filter((l) => !l.processes.includes(own));
      const who = (ls: Listener[]) =>
        [...new Set(ls.flatMap((l) => l.processes))].join(', ') || 'a process';
      add(
        `port-${port}`,
        holders.length === 0 ? 'free' : `held by ${who(holders)}`,
        `KP checks.go:238 PortOpenCheck; ${c} ${why}`,
        foreign.length === 0
          ? undefined
          : `port ${port} is in use by ${who(foreign)}, and ${c} binds it (${why}); stop that process or free the port`,
      );
    }
  }
  return out;
}

/** One line per failing check: the host, what is wrong and the fix. */
export function failureLines(results: readonly CheckResult[]): string[] {
  return results.filter((r) => !r.ok).map((r) => `${r.host}: ${r.check}: ${r.problem}`);
}
