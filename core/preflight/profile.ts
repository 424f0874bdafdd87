// What a host's kernel and init give the components, as preflight read it: the node models
// (kubelet, containerd, kube-proxy) render from this, so a VM with cgroup v2 and a lab container
// sharing this machine's v1 hierarchies each get what they need, and each says why.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HostReading } from './read.ts';
import { UNAME_ARCH, localArch, type Arch } from '../../lib/arch.ts';

export interface NodeProfile {
  /** The binaries and images this host is given are built for it (uname -m). */
  arch: Arch;
  cgroup: 'v1' | 'v2';
  /**
   * The host runs its own kernel (a VM or a machine), so wire loads modules and sets sysctls on it.
   * A container shares its machine's kernel: its modules and most sysctls are the machine's.
   */
  ownKernel: boolean;
  /** kube-proxy may write nf_conntrack_max here (false in a container: it is the machine's). */
  conntrackWritable: boolean;
  /** /proc/sys/net is writable: wire sets a worker's network sysctls (in a container, its own network namespace's). */
  netSysctls: boolean;
}

/** Container kinds systemd-detect-virt names (`systemd-detect-virt --list`, the container part). */
const CONTAINERS = new Set([
  'openvz',
  'lxc',
  'lxc-libvirt',
  'systemd-nspawn',
  'docker',
  'podman',
  'rkt',
  'wsl',
  'proot',
  'pouch',
]);

export function profileOf(r: HostReading): NodeProfile {
  return {
    // preflight's arch check fails a machine outside UNAME_ARCH before anything uses this.
    arch: UNAME_ARCH[r.arch] ?? localArch(),
    cgroup: r.cgroupfs === 'cgroup2fs' ? 'v2' : 'v1',
    ownKernel: !CONTAINERS.has(r.virt),
    conntrackWritable: r.conntrackWritable,
    netSysctls: r.netSysctlsWritable,
  };
}

/**
 * A host preflight has not read (an offline render, an upgrade plan): the built-in lab's containers.
 * wire, upgrade apply and certs renew always read their hosts first (phases/render.ts refuses otherwise).
 */
export const UNREAD_PROFILE: NodeProfile = {
  arch: localArch(),
  cgroup: 'v1',
  ownKernel: false,
  conntrackWritable: false,
  netSysctls: true,
};

/** Where wire keeps what preflight last read of each host, so that an offline render matches wire's. */
export function profilePath(clusterDir: string, host: string): string {
  return join(clusterDir, 'preflight', `${host}.json`);
}

export function saveProfile(clusterDir: string, host: string, p: NodeProfile): void {
  mkdirSync(join(clusterDir, 'preflight'), { recursive: true });
  writeFileSync(profilePath(clusterDir, host), `${JSON.stringify(p, null, 2)}\n`);
}

/** What preflight last read of the host, or undefined if it never read it. */
export function loadProfile(clusterDir: string, host: string): NodeProfile | undefined {
  try {
    // Recorded before hosts' architectures were read: this machine's, as wire then assumed.
    const p = JSON.parse(readFileSync(profilePath(clusterDir, host), 'utf8')) as NodeProfile;
    return { ...p, arch: p.arch ?? localArch() };
  } catch {
    return undefined;
  }
}
