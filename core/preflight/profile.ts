// What a host's kernel and init give the components, as preflight read it: the node models
// (kubelet, containerd, kube-proxy) render from this, so a VM with cgroup v2 and a lab container
// sharing this machine's v1 hierarchies each get what they need, and each says why.
import type { HostReading } from './read.ts';

export interface NodeProfile {
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
  cgroup: 'v1',
  ownKernel: false,
  conntrackWritable: false,
  netSysctls: true,
};
