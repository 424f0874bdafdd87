// What preflight reads on a host, parsed from one read-only script (transport/read-scripts.ts
// PREFLIGHT_READ): one `key<TAB>value` line per fact, so that a host is read in one round trip.
import type { ReadSession } from '../transport/index.ts';
import { PREFLIGHT_READ } from '../transport/read-scripts.ts';

export interface Listener {
  port: number;
  address: string;
  /** The process names ss shows (comm, at most 15 characters). */
  processes: string[];
}

export interface HostReading {
  host: string;
  os: string;
  kernel: string;
  /** uname -m */
  arch: string;
  /** stat -fc %T /sys/fs/cgroup: cgroup2fs on cgroup v2, tmpfs on v1. */
  cgroupfs: string;
  /** cgroup v2's enabled controllers; v1's enabled hierarchies (/proc/cgroups). */
  controllers: string[];
  v1controllers: string[];
  swaps: number;
  ipForward: string;
  /** Whether /proc/sys/net is writable here (a container with its own network namespace: yes). */
  netSysctlsWritable: boolean;
  /** Empty when br_netfilter is not loaded (its sysctls do not exist then). */
  bridgeNf: string;
  modules: string[];
  /** Whether this host may write nf_conntrack_max (kube-proxy's conntrack setup writes it). */
  conntrackWritable: boolean;
  /** systemd-detect-virt: none, kvm, qemu, systemd-nspawn, ... */
  virt: string;
  pid1: string;
  diskFreeKiB: number;
  diskSizeKiB: number;
  memKiB: number;
  cpus: number;
  missing: string[];
  listeners: Listener[];
  /** The host's clock minus the operator's, in seconds (the operator's time is the middle of the read). */
  skewSeconds: number;
}

function listener(text: string): Listener | undefined {
  const [local, proc = ''] = text.split(' ');
  const m = /^(.*):(\d+)$/.exec(local ?? '');
  if (!m) return undefined;
  return {
    address: m[1]!,
    port: Number(m[2]),
    processes: [...proc.matchAll(/\("([^"]+)"/g)].map((x) => x[1]!),
  };
}

export function parseReading(host: string, out: string, operatorMid: number): HostReading {
  const one = new Map<string, string>();
  const many = new Map<string, string[]>();
  for (const line of out.split('\n')) {
    const i = line.indexOf('\t');
    if (i < 0) continue;
    const [k, v] = [line.slice(0, i), line.slice(i + 1)];
    one.set(k, v);
    many.set(k, [...(many.get(k) ?? []), v]);
  }
  const s = (k: string) => one.get(k) ?? '';
  const words = (k: string) => s(k).split(/\s+/).filter(Boolean);
  const num = (k: string) => Number(s(k) || Number.NaN);
  return {
    host,
    os: s('os'),
    kernel: s('kernel'),
    arch: s('arch'),
    cgroupfs: s('cgroupfs'),
    controllers: words('controllers'),
    v1controllers: words('v1controllers'),
    swaps: num('swaps'),
    ipForward: s('ip_forward'),
    netSysctlsWritable: s('sysctl_net') === 'rw',
    bridgeNf: s('bridge_nf'),
    modules: words('modules'),
    conntrackWritable: s('conntrack') === 'rw',
    virt: s('virt'),
    pid1: s('pid1'),
    diskFreeKiB: Number(words('disk')[0] ?? Number.NaN),
    diskSizeKiB: Number(words('disk')[1] ?? Number.NaN),
    memKiB: num('memkb'),
    cpus: num('cpus'),
    missing: many.get('missing') ?? [],
    listeners: (many.get('listen') ?? []).flatMap((l) => listener(l) ?? []),
    skewSeconds: num('now') - operatorMid,
  };
}

/** Reads one host (read-only); the clock is compared with the operator's at the middle of the round trip. */
export async function readHost(s: ReadSession): Promise<HostReading> {
  const t0 = Date.now();
  const r = await s.exec(['sh', '-c', PREFLIGHT_READ], { timeoutMs: 30_000 });
  const t1 = Date.now();
  return parseReading(s.host.name, r.stdout, (t0 + t1) / 2000);
}
