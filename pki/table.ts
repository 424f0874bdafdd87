// The one certificate table, after kubeadm's certlist.go: every CA, leaf and kubeconfig identity.
// Pure: inventory in, specs out. Issuing and loading live in issue.ts and store.ts.
import type { Inventory, Host } from '../inventory/load.ts';

export type CaId = 'ca' | 'front-proxy-ca' | 'etcd-ca';
export type Usage = 'server' | 'client' | 'peer';

export interface CaSpec {
  id: CaId;
  /** Path under pki/, without .crt/.key, as on a kubeadm host. */
  file: string;
  cn: string;
  why: string;
}

export interface LeafSpec {
  id: string;
  /** Operator-side path under pki/, without .crt/.key. */
  file: string;
  ca: CaId;
  cn: string;
  o: string[];
  usage: Usage;
  dns: string[];
  ips: string[];
  /** Set for per-host certs (etcd server and peer). */
  host?: string;
  why: string;
}

export interface KubeconfigSpec {
  id: 'admin' | 'super-admin' | 'controller-manager' | 'scheduler';
  /** File name under /etc/kubernetes/. */
  file: string;
  cn: string;
  o: string[];
  /** Where the client connects: the cluster endpoint, or the host's own apiserver. */
  server: 'endpoint' | 'local';
  why: string;
}

export const CAS: readonly CaSpec[] = [
  { id: 'ca', file: 'ca', cn: 'kubernetes', why: 'signs the apiserver serving cert and every client cert the apiserver trusts' },
  { id: 'front-proxy-ca', file: 'front-proxy-ca', cn: 'front-proxy-ca', why: 'a separate trust root for aggregated API servers, so a client cert cannot pose as the proxy' },
  { id: 'etcd-ca', file: 'etcd/ca', cn: 'etcd-ca', why: 'etcd trusts only its own CA, so a cluster client cert cannot reach etcd' },
];

function uniq(xs: string[]): string[] {
  return [...new Set(xs)];
}

function isIp(s: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(s) || s.includes(':');
}

export function apiserverSans(inv: Inventory): { dns: string[]; ips: string[] } {
  const d = inv.cluster.dnsDomain;
  const names = [
    'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', `kubernetes.default.svc.${d}`, 'localhost',
    ...inv.controlPlaneHosts.map((h) => h.name),
    inv.endpoint.host,
    ...inv.cluster.extraSANs,
  ];
  const ips = ['127.0.0.1', inv.serviceIp, ...inv.controlPlaneHosts.map((h) => h.address)];
  return {
    dns: uniq(names.filter((n) => !isIp(n))),
    ips: uniq([...ips, ...names.filter(isIp)]),
  };
}

function etcdHostSans(h: Host): { dns: string[]; ips: string[] } {
  return { dns: uniq([h.name, 'localhost']), ips: uniq([h.address, '127.0.0.1', '::1']) };
}

export function leafTable(inv: Inventory): LeafSpec[] {
  const sans = apiserverSans(inv);
  const leaves: LeafSpec[] = [
    { id: 'apiserver', file: 'apiserver', ca: 'ca', cn: 'kube-apiserver', o: [], usage: 'server', ...sans,
      why: 'serving cert; includes the first service IP and kubernetes.default.svc.<domain>, which KTHW missed' },
    // No O: kubeadm v1.36.3 (certlist.go KubeadmCertKubeletClient) gives it no group and binds the
    // user to system:kubelet-api-admin instead (tlsbootstrap.go AllowAPIServerToAccessKubeletAPI).
    { id: 'apiserver-kubelet-client', file: 'apiserver-kubelet-client', ca: 'ca', cn: 'kube-apiserver-kubelet-client', o: [], usage: 'client', dns: [], ips: [],
      why: 'the apiserver as a client of kubelets; separate from its serving cert (KTHW reused one); RBAC grants it system:kubelet-api-admin only' },
    { id: 'apiserver-etcd-client', file: 'apiserver-etcd-client', ca: 'etcd-ca', cn: 'kube-apiserver-etcd-client', o: [], usage: 'client', dns: [], ips: [],
      why: 'the apiserver as an etcd client over mTLS' },
    { id: 'front-proxy-client', file: 'front-proxy-client', ca: 'front-proxy-ca', cn: 'front-proxy-client', o: [], usage: 'client', dns: [], ips: [],
      why: 'the apiserver proxying to aggregated API servers' },
    { id: 'etcd-healthcheck-client', file: 'etcd/healthcheck-client', ca: 'etcd-ca', cn: 'kube-etcd-healthcheck-client', o: [], usage: 'client', dns: [], ips: [],
      why: 'health probes against etcd, with no other use' },
  ];
  for (const h of inv.etcdHosts) {
    leaves.push(
      { id: 'etcd-server', file: `etcd/${h.name}/server`, host: h.name, ca: 'etcd-ca', cn: h.name, o: [], usage: 'peer', ...etcdHostSans(h),
        why: 'etcd client-facing serving cert; clientAuth too, as kubeadm does, for etcdctl on the host' },
      { id: 'etcd-peer', file: `etcd/${h.name}/peer`, host: h.name, ca: 'etcd-ca', cn: h.name, o: [], usage: 'peer', ...etcdHostSans(h),
        why: 'etcd member-to-member mTLS; each side is both server and client' },
    );
  }
  return leaves;
}

export const KUBECONFIGS: readonly KubeconfigSpec[] = [
  { id: 'admin', file: 'admin.conf', cn: 'kubernetes-admin', o: ['kubeadm:cluster-admins'], server: 'endpoint',
    why: 'day-to-day admin; powerless until the kubeadm:cluster-admins binding exists, so it can be revoked' },
  { id: 'super-admin', file: 'super-admin.conf', cn: 'kubernetes-super-admin', o: ['system:masters'], server: 'endpoint',
    why: 'break-glass only: system:masters bypasses RBAC and cannot be revoked' },
  { id: 'controller-manager', file: 'controller-manager.conf', cn: 'system:kube-controller-manager', o: [], server: 'local',
    why: 'identity bound by the built-in system:kube-controller-manager ClusterRole' },
  { id: 'scheduler', file: 'scheduler.conf', cn: 'system:kube-scheduler', o: [], server: 'local',
    why: 'identity bound by the built-in system:kube-scheduler ClusterRole (CN, not KTHW\'s O=system:system:kube-scheduler)' },
];

/** Kubeconfig client certs, kept in the operator pki/ so re-runs are byte-stable. */
export function kubeconfigLeaf(k: KubeconfigSpec): LeafSpec {
  return { id: `kubeconfig-${k.id}`, file: `kubeconfig/${k.id}`, ca: 'ca', cn: k.cn, o: k.o, usage: 'client', dns: [], ips: [], why: k.why };
}

export function allLeaves(inv: Inventory): LeafSpec[] {
  return [...leafTable(inv), ...KUBECONFIGS.map(kubeconfigLeaf)];
}
