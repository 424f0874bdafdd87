// What a worker's kernel must do, as kubeadm's and k0s's install docs ask of every node: load
// overlay and br_netfilter, forward IPv4, and pass bridged traffic through netfilter. Rendered as
// files at systemd's own paths (modules-load.d(5), sysctl.d(5)), so the host's boot applies them,
// and applied before containerd starts. Modules only on a host with its own kernel (a VM or a
// machine): a lab container shares its machine's. The sysctls are per network namespace, so a lab
// container with its own sets them too (systemd-sysctl skips them there at boot: /proc/sys is
// read-only in it, so containerd's start applies them).
import type { Directive, ModelFile } from './types.ts';
import type { NodeProfile } from '../../preflight/profile.ts';

export const MODULES_FILE = '/etc/modules-load.d/hardwire.conf';
export const SYSCTL_FILE = '/etc/sysctl.d/90-hardwire.conf';

const MODULES: [string, string][] = [
  ['overlay', "containerd's overlayfs snapshotter mounts each container's root filesystem with it"],
  [
    'br_netfilter',
    "bridged Pod traffic passes netfilter only with it, so a Pod reaching a Service backed on the same node is DNATed by kube-proxy's rules",
  ],
];

const SYSCTLS: [string, string, string][] = [
  [
    'net.ipv4.ip_forward',
    '1',
    "this node routes Pod traffic between cni0 and the other nodes (kubeadm's preflight fails without it: cmd/kubeadm/app/preflight/checks_linux.go:67)",
  ],
  [
    'net.bridge.bridge-nf-call-iptables',
    '1',
    "IPv4 traffic across cni0 goes through netfilter, where kube-proxy's nftables rules are (needs br_netfilter)",
  ],
  [
    'net.bridge.bridge-nf-call-ip6tables',
    '1',
    'the same for IPv6, as the install docs set it (needs br_netfilter)',
  ],
];

const modulesText = `# Rendered by hardwire (components/models/node-kernel.ts): loaded at boot by systemd-modules-load.
${MODULES.map(([m, why]) => `# ${m}: ${why}.\n${m}`).join('\n')}
`;

const sysctlText = `# Rendered by hardwire (components/models/node-kernel.ts): applied at boot by systemd-sysctl.
${SYSCTLS.map(([k, v, why]) => `# ${why}.\n${k} = ${v}`).join('\n')}
`;

const MODULES_LOAD: ModelFile = {
  path: MODULES_FILE,
  content: modulesText,
  mode: 0o644,
  why: 'the kernel modules a worker needs, loaded at every boot',
};

const SYSCTLS_SET: ModelFile = {
  path: SYSCTL_FILE,
  content: sysctlText,
  mode: 0o644,
  why: 'the network sysctls a worker needs, set at every boot and every containerd start',
};

/** The files a worker gets: what preflight found this host can take. */
export function nodeKernelFiles(node: NodeProfile): ModelFile[] {
  return [...(node.ownKernel ? [MODULES_LOAD] : []), ...(node.netSysctls ? [SYSCTLS_SET] : [])];
}

/** Applied before containerd starts, so the first start after wire does not wait for a reboot. */
export function nodeKernelDirectives(node: NodeProfile): Directive[] {
  return [
    ...(node.ownKernel
      ? [
          {
            key: 'ExecStartPre',
            value: `/usr/sbin/modprobe -a ${MODULES.map(([m]) => m).join(' ')}`,
            why: `load the modules ${MODULES_FILE} lists (this host has its own kernel)`,
          },
        ]
      : []),
    ...(node.netSysctls
      ? [
          {
            key: 'ExecStartPre',
            value: `/usr/sbin/sysctl -q -p ${SYSCTL_FILE}`,
            why: `set the sysctls ${SYSCTL_FILE} lists (after br_netfilter has made its own exist)`,
          },
        ]
      : []),
  ];
}
