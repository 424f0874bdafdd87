// The kubelet of a worker: a KubeletConfiguration with what the workers spike (docs/workers-spike.md
// on branch workers) found necessary in a lab container, and the node's own identity and serving cert.
// Citations as in config-file.ts (K = k8s.io/kubernetes@v1.36.3, KB = k8s.io/kubelet@v0.36.3, the
// v1beta1 config types); test/worker-citations.test.ts re-opens them. The flag map (flags/data) cites
// the unit's flags as it does the control plane's; the config fields are cited here.
import { flag, K, PKI, BIN, type ModelContext, type UnitModel } from './types.ts';
import { configYaml, type ConfigField } from './config-file.ts';
import { indexedIp } from '../../../lib/net.ts';
import { CONTAINERD_SOCKET } from './containerd.ts';

export const KUBELET_DIR = '/var/lib/kubelet';
export const KUBELET_CONFIG = `${KUBELET_DIR}/config.yaml`;
/** The kubelet's serving pair: the file names of its own self-signed default (--cert-dir), here signed by the cluster CA. */
export const KUBELET_SERVING = `${KUBELET_DIR}/pki/kubelet`;
export const KUBELET_KUBECONFIG = `${K}/kubelet.conf`;
/** The cipher suites CIS 4.2.12 allows (kube-bench cfg/cis-1.12/node.yaml), all of them. */
export const CIS_KUBELET_CIPHERS = ['TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305',
  'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384'] as const;
/** Far above what CoreDNS or a probe Pod runs; low enough that one Pod cannot starve the node. */
export const POD_PIDS_LIMIT = 4096;

export function kubeletConfig(ctx: ModelContext): string {
  const { host } = ctx;
  return configYaml({
    apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration',
    comment: `Rendered by hardwire for ${host.name} (components/models/kubelet.ts).`,
  }, kubeletFields(ctx));
}

/** Every KubeletConfiguration field hardwire sets, with its reason and source line. */
export function kubeletFields({ inv, host }: ModelContext): ConfigField[] {
  return [
    { key: 'address', value: host.address, why: 'serve the kubelet API (logs, exec) on the node address the apiserver reaches it on (InternalIP, --kubelet-preferred-address-types)', cite: { mod: 'KB', file: 'config/v1beta1/types.go', line: 164, holds: 'json:"address' } },
    { key: 'readOnlyPort', value: 0, why: 'no unauthenticated read-only port (10255); 0 disables it (CIS 4.2.4)', cite: { mod: 'KB', file: 'config/v1beta1/types.go', line: 176, holds: 'json:"readOnlyPort' } },
    { key: 'tlsCertFile', value: `${KUBELET_SERVING}.crt`, why: 'serving cert from the table (CN system:node:<node>, SANs the node name and address), signed by the cluster CA, so the apiserver\'s --kubelet-certificate-authority verifies it', cite: { mod: 'KB', file: 'config/v1beta1/types.go', line: 184, holds: 'json:"tlsCertFile' } },
    { key: 'tlsPrivateKeyFile', value: `${KUBELET_SERVING}.key`, why: 'key of the serving cert', cite: { mod: 'KB', file: 'config/v1beta1/types.go', line: 188, holds: 'json:"tlsPrivateKeyFile' } },
    { key: 'tlsCipherSuites', value: [...CIS_KUBELET_CIPHERS], why: 'TLS 1.2 clients get only ECDHE with AEAD ciphers, the list CIS 4.2.12 allows; the default is Go\'s, which for TLS 1.2 also offers ECDHE CBC-SHA suites (TLS 1.3 suites are not configurable)', cite: { mod: 'KB', file: 'config/v1beta1/types.go', line: 194, holds: 'json:"tlsCipherSuites' } },
    { key: 'authentication', value: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: `${PKI}/ca.crt` } },
      why: 'no anonymous requests (CIS 4.2.1); bearer tokens checked with the apiserver (TokenReview); client certs (the apiserver\'s apiserver-kubelet-client) against the cluster CA (CIS 4.2.3; KubeletX509Authentication.ClientCAFile, KB config/v1beta1/types.go:1014)', cite: { mod: 'KB', file: 'config/v1beta1/types.go', line: 232, holds: 'json:"authentication"' } },
    { key: 'authorization', value: { mode: 'Webhook' }, why: 'each request authorized by the apiserver (SubjectAccessReview), not AlwaysAllow (CIS 4.2.2; KubeletAuthorization.Mode, KB config/v1beta1/types.go:978)', cite: { mod: 'KB', file: 'config/v1beta1/types.go', line: 240, holds: 'json:"authorization"' } },
    { key: 'cgroupDriver', value: 'cgroupfs', why: 'the machine\'s cgroups are v1 and its PID 1 is not systemd; the node\'s systemd does not own the v1 hierarchies (workers spike)', cite: { mod: 'KB', file: 'config/v1beta1/types.go', line: 417, holds: 'json:"cgroupDriver' } },
    { key: 'failCgroupV1', value: false, why: 'v1.36 refuses to start on cgroup v1 unless this is false, and the lab machine has only v1 controllers (workers spike)', cite: { mod: 'K', file: 'pkg/kubelet/apis/config/validation/validation_linux.go', line: 35, holds: 'kc.FailCgroupV1 && isCgroup1' } },
    { key: 'failSwapOn', value: false, why: 'the kubelet otherwise refuses a machine with swap on; lab hosts share the machine\'s swap (workers spike)', cite: { mod: 'KB', file: 'config/v1beta1/types.go', line: 669, holds: 'json:"failSwapOn' } },
    { key: 'containerRuntimeEndpoint', value: `unix://${CONTAINERD_SOCKET}`, why: 'containerd\'s CRI socket (components/models/containerd.ts)', cite: { mod: 'KB', file: 'config/v1beta1/types.go', line: 942, holds: 'json:"containerRuntimeEndpoint"' } },
    { key: 'podPidsLimit', value: POD_PIDS_LIMIT, why: 'a fork bomb in one Pod stops at its pod cgroup\'s pids.max instead of taking the node\'s PIDs (lab hosts share the machine\'s); the default -1 is no limit (CIS 4.2.13; set when > 0, K pkg/kubelet/cm/pod_container_manager_linux.go:97)', cite: { mod: 'KB', file: 'config/v1beta1/types.go', line: 514, holds: 'json:"podPidsLimit' } },
    { key: 'seccompDefault', value: true, why: 'a container without its own seccomp profile runs under the runtime\'s default (RuntimeDefault) rather than Unconfined; the default is false (CIS 4.2.14)', cite: { mod: 'KB', file: 'config/v1beta1/types.go', line: 892, holds: 'json:"seccompDefault' } },
    { key: 'clusterDomain', value: inv.cluster.dnsDomain, why: 'Pods\' search domains end in the cluster domain (cluster.dnsDomain)', cite: { mod: 'KB', file: 'config/v1beta1/types.go', line: 317, holds: 'json:"clusterDomain' } },
    { key: 'clusterDNS', value: [indexedIp(inv.serviceCidr, 10)], why: 'cluster DNS Service IP: the 10th address of the service CIDR, as kubeadm picks it', cite: { mod: 'K', file: 'cmd/kubeadm/app/constants/constants.go', line: 688, holds: 'GetIndexedIP(svcSubnetCIDR, 10)' } },
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
    files: [{ path: KUBELET_CONFIG, content: kubeletConfig(ctx), mode: 0o600, why: 'the KubeletConfiguration (--config), rendered per node; 0600, as CIS 4.1.9 asks: only the kubelet (root) reads it (kubeadm writes 0644, K cmd/kubeadm/app/phases/kubelet/config.go:215)' }],
    flags: [
      flag('config', KUBELET_CONFIG, 'everything that has a config field is set there, with its reason (K cmd/kubelet/app/options/options.go:281)'),
      flag('hostname-override', host.name, 'the Node name must be the node\'s cert CN without system:node:, or the Node authorizer and NodeRestriction refuse it (K pkg/auth/nodeidentifier/default.go:37; K cmd/kubelet/app/options/options.go:290)'),
      flag('kubeconfig', KUBELET_KUBECONFIG, 'its identity toward the apiserver (system:node:<node>, group system:nodes); without it the kubelet runs standalone (K cmd/kubelet/app/options/options.go:283)'),
      flag('node-ip', host.address, 'lab hosts have no default route, and the kubelet otherwise takes the address of the default route (no default routes found in /proc/net/route, workers spike) (K cmd/kubelet/app/options/options.go:292)'),
    ],
  };
}
