// The one certificate table, after kubeadm's certlist.go: every CA, leaf and kubeconfig identity,
// where each lands on a host and which components read it there. render/host-tree.ts and
// certs/catalog.ts derive from it. Pure: inventory in, specs out. Issuing and loading live in
// issue.ts and store.ts.
import type { Inventory, Host } from '../inventory/load.ts';
import { K8S_DIR, PKI_DIR } from '../lib/constants.ts';
import { COMPONENTS, type ComponentName } from '../components/registry/index.ts';
import type { Role } from '../components/registry/types.ts';

export type CaId = 'ca' | 'front-proxy-ca' | 'etcd-ca';
export type Usage = 'server' | 'client' | 'peer';

/**
 * Where a table entry lands: on every host of `on` (only the first control-plane host with
 * `firstOnly`), at `path` (without .crt/.key for a pair), read there by `readBy` (a change restarts
 * them). `key` says whether the private key goes too. A host with two roles gets one file, read
 * by both lists.
 */
export interface Placement {
  on: Role;
  path: string;
  readBy: ComponentName[];
  key: boolean;
  firstOnly?: boolean;
}

export interface CaSpec {
  id: CaId;
  /** Path under pki/, without .crt/.key, as on a kubeadm host. */
  file: string;
  cn: string;
  why: string;
  placements: Placement[];
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
  /** Set for per-host certs (etcd server and peer): placed on that host only. */
  host?: string;
  why: string;
  /** None for kubeconfig client certs: they land inside their kubeconfig. */
  placements: Placement[];
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
  /** Break-glass credentials sit on the first control-plane host only, as kubeadm does. */
  firstOnly?: boolean;
}

const at = (on: Role, rel: string, readBy: ComponentName[], key = true): Placement => ({ on, path: `${PKI_DIR}/${rel}`, readBy, key });

export const CAS: readonly CaSpec[] = [
  // The key too: kube-controller-manager signs approved CSRs with it (--cluster-signing-key-file).
  { id: 'ca', file: 'ca', cn: 'kubernetes', why: 'signs the apiserver serving cert and every client cert the apiserver trusts',
    placements: [at('control-plane', 'ca', ['kube-apiserver', 'kube-controller-manager'])] },
  { id: 'front-proxy-ca', file: 'front-proxy-ca', cn: 'front-proxy-ca', why: 'a separate trust root for aggregated API servers, so a client cert cannot pose as the proxy',
    placements: [at('control-plane', 'front-proxy-ca', ['kube-apiserver', 'kube-controller-manager'], false)] },
  { id: 'etcd-ca', file: 'etcd/ca', cn: 'etcd-ca', why: 'etcd trusts only its own CA, so a cluster client cert cannot reach etcd',
    placements: [at('etcd', 'etcd/ca', ['etcd'], false), at('control-plane', 'etcd/ca', ['kube-apiserver'], false)] },
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
      why: 'serving cert; includes the first service IP and kubernetes.default.svc.<domain>, which KTHW missed',
      placements: [at('control-plane', 'apiserver', ['kube-apiserver'])] },
    // No O: kubeadm v1.36.3 (certlist.go KubeadmCertKubeletClient) gives it no group and binds the
    // user to system:kubelet-api-admin instead (tlsbootstrap.go AllowAPIServerToAccessKubeletAPI).
    { id: 'apiserver-kubelet-client', file: 'apiserver-kubelet-client', ca: 'ca', cn: 'kube-apiserver-kubelet-client', o: [], usage: 'client', dns: [], ips: [],
      why: 'the apiserver as a client of kubelets; separate from its serving cert (KTHW reused one); RBAC grants it system:kubelet-api-admin only',
      placements: [at('control-plane', 'apiserver-kubelet-client', ['kube-apiserver'])] },
    { id: 'apiserver-etcd-client', file: 'apiserver-etcd-client', ca: 'etcd-ca', cn: 'kube-apiserver-etcd-client', o: [], usage: 'client', dns: [], ips: [],
      why: 'the apiserver as an etcd client over mTLS',
      placements: [at('control-plane', 'apiserver-etcd-client', ['kube-apiserver'])] },
    { id: 'front-proxy-client', file: 'front-proxy-client', ca: 'front-proxy-ca', cn: 'front-proxy-client', o: [], usage: 'client', dns: [], ips: [],
      why: 'the apiserver proxying to aggregated API servers',
      placements: [at('control-plane', 'front-proxy-client', ['kube-apiserver'])] },
    { id: 'etcd-healthcheck-client', file: 'etcd/healthcheck-client', ca: 'etcd-ca', cn: 'kube-etcd-healthcheck-client', o: [], usage: 'client', dns: [], ips: [],
      why: 'health probes against etcd, with no other use (hardwire\'s etcd gate and snapshots run etcdctl with it on the host)',
      placements: [at('etcd', 'etcd/healthcheck-client', [])] },
  ];
  for (const h of inv.etcdHosts) {
    leaves.push(
      { id: 'etcd-server', file: `etcd/${h.name}/server`, host: h.name, ca: 'etcd-ca', cn: h.name, o: [], usage: 'peer', ...etcdHostSans(h),
        why: 'etcd client-facing serving cert; clientAuth too, as kubeadm does, for etcdctl on the host',
        placements: [at('etcd', 'etcd/server', ['etcd'])] },
      { id: 'etcd-peer', file: `etcd/${h.name}/peer`, host: h.name, ca: 'etcd-ca', cn: h.name, o: [], usage: 'peer', ...etcdHostSans(h),
        why: 'etcd member-to-member mTLS; each side is both server and client',
        placements: [at('etcd', 'etcd/peer', ['etcd'])] },
    );
  }
  return leaves;
}

export const KUBECONFIGS: readonly KubeconfigSpec[] = [
  { id: 'admin', file: 'admin.conf', cn: 'kubernetes-admin', o: ['kubeadm:cluster-admins'], server: 'endpoint',
    why: 'day-to-day admin; powerless until the kubeadm:cluster-admins binding exists, so it can be revoked' },
  { id: 'super-admin', file: 'super-admin.conf', cn: 'kubernetes-super-admin', o: ['system:masters'], server: 'endpoint',
    why: 'break-glass only: system:masters bypasses RBAC and cannot be revoked', firstOnly: true },
  { id: 'controller-manager', file: 'controller-manager.conf', cn: 'system:kube-controller-manager', o: [], server: 'local',
    why: 'identity bound by the built-in system:kube-controller-manager ClusterRole' },
  { id: 'scheduler', file: 'scheduler.conf', cn: 'system:kube-scheduler', o: [], server: 'local',
    why: 'identity bound by the built-in system:kube-scheduler ClusterRole (CN, not KTHW\'s O=system:system:kube-scheduler)' },
];

/** Kubeconfig client certs, kept in the operator pki/ so re-runs are byte-stable. */
export function kubeconfigLeaf(k: KubeconfigSpec): LeafSpec {
  return { id: `kubeconfig-${k.id}`, file: `kubeconfig/${k.id}`, ca: 'ca', cn: k.cn, o: k.o, usage: 'client', dns: [], ips: [], why: k.why, placements: [] };
}

/** A kubeconfig lands in /etc/kubernetes on control-plane hosts; its readers are the components whose registry spec names it. */
export function kubeconfigPlacement(k: KubeconfigSpec): Placement {
  const readBy = COMPONENTS.filter((c) => 'kubeconfig' in c && c.kubeconfig === k.id).map((c) => c.name);
  return { on: 'control-plane', path: `${K8S_DIR}/${k.file}`, readBy, key: false, ...(k.firstOnly ? { firstOnly: true } : {}) };
}

/** Other key material the operator keeps next to the certs: the service-account key pair and the encryption config. */
export interface SecretFile { file: string; private: boolean; placement: Placement }

export const SECRET_FILES: readonly SecretFile[] = [
  // The apiserver signs and verifies tokens with the pair; the controller-manager signs with the key.
  { file: 'sa.key', private: true, placement: { on: 'control-plane', path: `${PKI_DIR}/sa.key`, readBy: ['kube-apiserver', 'kube-controller-manager'], key: false } },
  { file: 'sa.pub', private: false, placement: { on: 'control-plane', path: `${PKI_DIR}/sa.pub`, readBy: ['kube-apiserver'], key: false } },
  { file: 'encryption-config.yaml', private: true, placement: { on: 'control-plane', path: `${K8S_DIR}/encryption-config.yaml`, readBy: ['kube-apiserver'], key: false } },
];

/** Whether a placement applies to a host (per-host leaves pass their own host name). */
export function placedOn(p: Placement, inv: Inventory, host: Host, leafHost?: string): boolean {
  if (leafHost !== undefined && leafHost !== host.name) return false;
  if (!(p.on === 'etcd' ? host.isEtcd : host.isControlPlane)) return false;
  return !p.firstOnly || inv.controlPlaneHosts[0]?.name === host.name;
}

export function allLeaves(inv: Inventory): LeafSpec[] {
  return [...leafTable(inv), ...KUBECONFIGS.map(kubeconfigLeaf)];
}
