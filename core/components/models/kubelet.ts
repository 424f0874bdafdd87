// The kubelet of a worker: a KubeletConfiguration with what the workers spike (docs/workers-spike.md
// on branch workers) found necessary in a lab container, and the node's own identity and serving cert.
// The flag map (flags/data) cites the unit's flags and each config field (its v1beta1 declaration and
// where the kubelet reads it); the reasons' own K file:line refs (config-file.ts) are re-opened by
// test/worker-citations.test.ts.
import { flag, K, PKI, BIN, nodeOf, type ModelContext, type UnitModel } from './types.ts';
import { configYaml, type ConfigField } from './config-file.ts';
import { indexedIp } from '../../../lib/net.ts';
import { CONTAINERD_SOCKET } from './containerd.ts';

export const KUBELET_DIR = '/var/lib/kubelet';
export const KUBELET_CONFIG = `${KUBELET_DIR}/config.yaml`;
/** The kubelet's serving pair: the file names of its own self-signed default (--cert-dir), here signed by the cluster CA. */
export const KUBELET_SERVING = `${KUBELET_DIR}/pki/kubelet`;
export const KUBELET_KUBECONFIG = `${K}/kubelet.conf`;
/**
 * The cipher suites CIS 4.2.12 allows the kubelet (kube-bench cfg/cis-1.12/node.yaml), all of them: ECDHE
 * with AEAD. Every one is in the longer list 1.2.29 allows the apiserver, which uses it too.
 */
export const CIS_TLS_CIPHERS = [
  'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
  'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
  'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305',
  'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
  'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305',
  'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
] as const;
/** Far above what CoreDNS or a probe Pod runs; low enough that one Pod cannot starve the node. */
export const POD_PIDS_LIMIT = 4096;

export function kubeletConfig(ctx: ModelContext): string {
  const { host } = ctx;
  return configYaml(
    {
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      comment: `Rendered by hardwire for ${host.name} (components/models/kubelet.ts).`,
    },
    kubeletFields(ctx),
    ctx.citeConfig && ((k) => ctx.citeConfig!('kubelet', k)),
  );
}

/**
 * The cgroup driver follows the host (preflight reads /sys/fs/cgroup): on cgroup v2 with systemd as
 * PID 1, systemd owns the tree, so the kubelet and containerd (SystemdCgroup) ask it for cgroups, as
 * kubeadm defaults (K cmd/kubeadm/app/componentconfigs/kubelet.go:196). A lab container on this
 * machine has v1 hierarchies its systemd does not own: cgroupfs, and v1 allowed explicitly.
 * failSwapOn is left at its default (true): preflight fails a worker with swap on.
 */
function cgroupFields(ctx: ModelContext): ConfigField[] {
  if (nodeOf(ctx).cgroup === 'v2')
    return [
      {
        key: 'cgroupDriver',
        value: 'systemd',
        why: "the host runs cgroup v2 with systemd as PID 1 (read by preflight): systemd owns the cgroup tree, so the kubelet asks it for cgroups (containerd's runc: SystemdCgroup = true), as kubeadm defaults (K cmd/kubeadm/app/componentconfigs/kubelet.go:196)",
      },
    ];
  return [
    {
      key: 'cgroupDriver',
      value: 'cgroupfs',
      why: "the host's cgroups are v1 (read by preflight): a lab container's v1 hierarchies are the machine's, and its systemd does not own them (workers spike)",
    },
    {
      key: 'failCgroupV1',
      value: false,
      why: 'v1.36 refuses to start on cgroup v1 unless this is false, and this host has only v1 controllers (read by preflight; workers spike)',
    },
  ];
}

/** Every KubeletConfiguration field hardwire sets, with its reason (the flag map cites each). */
export function kubeletFields(ctx: ModelContext): ConfigField[] {
  const { inv, host } = ctx;
  return [
    {
      key: 'address',
      value: host.address,
      why: 'serve the kubelet API (logs, exec) on the node address the apiserver reaches it on (InternalIP, --kubelet-preferred-address-types)',
    },
    {
      key: 'readOnlyPort',
      value: 0,
      why: 'no unauthenticated read-only port (10255); 0 disables it (CIS 4.2.4)',
    },
    {
      key: 'tlsCertFile',
      value: `${KUBELET_SERVING}.crt`,
      why: "serving cert from the table (CN system:node:<node>, SANs the node name and address), signed by the cluster CA, so the apiserver's --kubelet-certificate-authority verifies it",
    },
    { key: 'tlsPrivateKeyFile', value: `${KUBELET_SERVING}.key`, why: 'key of the serving cert' },
    {
      key: 'tlsCipherSuites',
      value: [...CIS_TLS_CIPHERS],
      why: "TLS 1.2 clients get only ECDHE with AEAD ciphers, the list CIS 4.2.12 allows; the default is Go's, which for TLS 1.2 also offers ECDHE CBC-SHA suites (TLS 1.3 suites are not configurable)",
    },
    {
      key: 'authentication',
      value: {
        anonymous: { enabled: false },
        webhook: { enabled: true },
        x509: { clientCAFile: `${PKI}/ca.crt` },
      },
      why: "no anonymous requests (CIS 4.2.1); bearer tokens checked with the apiserver (TokenReview); client certs (the apiserver's apiserver-kubelet-client) against the cluster CA (CIS 4.2.3)",
    },
    {
      key: 'authorization',
      value: { mode: 'Webhook' },
      why: 'each request authorized by the apiserver (SubjectAccessReview), not AlwaysAllow (CIS 4.2.2)',
    },
    ...cgroupFields(ctx),
    {
      key: 'containerRuntimeEndpoint',
      value: `unix://${CONTAINERD_SOCKET}`,
      why: "containerd's CRI socket (components/models/containerd.ts)",
    },
    {
      key: 'podPidsLimit',
      value: POD_PIDS_LIMIT,
      why: "a fork bomb in one Pod stops at its pod cgroup's pids.max instead of taking the node's PIDs (lab hosts share the machine's); the default -1 is no limit (CIS 4.2.13; set when > 0, K pkg/kubelet/cm/pod_container_manager_linux.go:97)",
    },
    {
      key: 'seccompDefault',
      value: true,
      why: "a container without its own seccomp profile runs under the runtime's default (RuntimeDefault) rather than Unconfined; the default is false (CIS 4.2.14)",
    },
    {
      key: 'clusterDomain',
      value: inv.cluster.dnsDomain,
      why: "Pods' search domains end in the cluster domain (cluster.dnsDomain)",
    },
    {
      key: 'clusterDNS',
      value: [indexedIp(inv.serviceCidr, 10)],
      why: 'cluster DNS Service IP: the 10th address of the service CIDR, as kubeadm picks it (K cmd/kubeadm/app/constants/constants.go:688)',
    },
  ];
}

export function kubeletModel(ctx: ModelContext): UnitModel {
  const { host } = ctx;
  return {
    component: 'kubelet',
    description: 'Kubernetes node agent (hardwire)',
    documentation: 'https://kubernetes.io/docs/reference/command-line-tools-reference/kubelet/',
    type: 'simple',
    binary: `${BIN}/kubelet`,
    files: [
      {
        path: KUBELET_CONFIG,
        content: kubeletConfig(ctx),
        fields: kubeletFields(ctx),
        mode: 0o600,
        why: 'the KubeletConfiguration (--config), rendered per node; 0600, as CIS 4.1.9 asks: only the kubelet (root) reads it (kubeadm writes 0644, K cmd/kubeadm/app/phases/kubelet/config.go:215)',
      },
    ],
    flags: [
      flag(
        'config',
        KUBELET_CONFIG,
        'everything that has a config field is set there, with its reason (K cmd/kubelet/app/options/options.go:281)',
      ),
      flag(
        'hostname-override',
        host.name,
        "the Node name must be the node's cert CN without system:node:, or the Node authorizer and NodeRestriction refuse it (K pkg/auth/nodeidentifier/default.go:37; K cmd/kubelet/app/options/options.go:290)",
      ),
      flag(
        'kubeconfig',
        KUBELET_KUBECONFIG,
        'its identity toward the apiserver (system:node:<node>, group system:nodes); without it the kubelet runs standalone (K cmd/kubelet/app/options/options.go:283)',
      ),
      flag(
        'node-ip',
        host.address,
        'lab hosts have no default route, and the kubelet otherwise takes the address of the default route (no default routes found in /proc/net/route, workers spike) (K cmd/kubelet/app/options/options.go:292)',
      ),
    ],
  };
}
