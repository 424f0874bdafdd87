// The one certificate table, after kubeadm's certlist.go: every CA, leaf and kubeconfig identity,
// where each lands on a host and which components read it there. render/host-tree.ts and
// certs/catalog.ts derive from it. Pure: inventory in, specs out. Issuing and loading live in
// issue.ts and store.ts.
import type { Inventory, Host } from '../inventory/load.ts';
import { K8S_DIR, PKI_DIR } from '../../lib/constants.ts';
import { COMPONENTS, type ComponentName } from '../components/registry/index.ts';
import { hasRole, type ComponentSpec, type Role } from '../components/registry/types.ts';
import type { CaId, KubeconfigIdentity, NodeRef, Usage } from './identity.ts';

export type { CaId, Usage } from './identity.ts';

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

/** A kubeconfig identity placed by the table: on hosts with `on`, read there by `readBy`. */
export interface KubeconfigSpec extends KubeconfigIdentity {
  on: Role;
  readBy: ComponentName[];
  /** Break-glass credentials sit on the first control-plane host only, as kubeadm does. */
  firstOnly?: boolean;
}

const at = (on: Role, rel: string, readBy: ComponentName[], key = true): Placement => ({
  on,
  path: `${PKI_DIR}/${rel}`,
  readBy,
  key,
});

export const CAS: readonly CaSpec[] = [
  // The key too: kube-controller-manager signs approved CSRs with it (--cluster-signing-key-file).
  // Workers get the cert only: the kubelet verifies client certs (the apiserver's) against it.
  {
    id: 'ca',
    file: 'ca',
    cn: 'kubernetes',
    why: "signs the apiserver serving cert, every client cert the apiserver trusts and the kubelets' serving certs",
    placements: [
      at('control-plane', 'ca', ['kube-apiserver', 'kube-controller-manager']),
      at('worker', 'ca', ['kubelet'], false),
    ],
  },
  {
    id: 'front-proxy-ca',
    file: 'front-proxy-ca',
    cn: 'front-proxy-ca',
    why: 'a separate trust root for aggregated API servers, so a client cert cannot pose as the proxy',
    placements: [
      at('control-plane', 'front-proxy-ca', ['kube-apiserver', 'kube-controller-manager'], false),
    ],
  },
  {
    id: 'etcd-ca',
    file: 'etcd/ca',
    cn: 'etcd-ca',
    why: 'etcd trusts only its own CA, so a cluster client cert cannot reach etcd',
    placements: [
      at('etcd', 'etcd/ca', ['etcd'], false),
      at('control-plane', 'etcd/ca', ['kube-apiserver'], false),
    ],
  },
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
    'kubernetes',
    'kubernetes.default',
    'kubernetes.default.svc',
    `kubernetes.default.svc.${d}`,
    'localhost',
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
    {
      id: 'apiserver',
      file: 'apiserver',
      ca: 'ca',
      cn: 'kube-apiserver',
      o: [],
      usage: 'server',
      ...sans,
      why: 'serving cert; includes the first service IP and kubernetes.default.svc.<domain>, which KTHW missed',
      placements: [at('control-plane', 'apiserver', ['kube-apiserver'])],
    },
    // No O: kubeadm v1.36.3 (certlist.go KubeadmCertKubeletClient) gives it no group and binds the
    // user to system:kubelet-api-admin instead (tlsbootstrap.go AllowAPIServerToAccessKubeletAPI).
    {
      id: 'apiserver-kubelet-client',
      file: 'apiserver-kubelet-client',
      ca: 'ca',
      cn: 'kube-apiserver-kubelet-client',
      o: [],
      usage: 'client',
      dns: [],
      ips: [],
      why: 'the apiserver as a client of kubelets; separate from its serving cert (KTHW reused one); RBAC grants it system:kubelet-api-admin only',
      placements: [at('control-plane', 'apiserver-kubelet-client', ['kube-apiserver'])],
    },
    {
      id: 'apiserver-etcd-client',
      file: 'apiserver-etcd-client',
      ca: 'etcd-ca',
      cn: 'kube-apiserver-etcd-client',
      o: [],
      usage: 'client',
      dns: [],
      ips: [],
      why: 'the apiserver as an etcd client over mTLS',
      placements: [at('control-plane', 'apiserver-etcd-client', ['kube-apiserver'])],
    },
    {
      id: 'front-proxy-client',
      file: 'front-proxy-client',
      ca: 'front-proxy-ca',
      cn: 'front-proxy-client',
      o: [],
      usage: 'client',
      dns: [],
      ips: [],
      why: 'the apiserver proxying to aggregated API servers',
      placements: [at('control-plane', 'front-proxy-client', ['kube-apiserver'])],
    },
    {
      id: 'etcd-healthcheck-client',
      file: 'etcd/healthcheck-client',
      ca: 'etcd-ca',
      cn: 'kube-etcd-healthcheck-client',
      o: [],
      usage: 'client',
      dns: [],
      ips: [],
      why: "health probes against etcd, with no other use (hardwire's etcd gate and snapshots run etcdctl with it on the host)",
      placements: [at('etcd', 'etcd/healthcheck-client', [])],
    },
  ];
  for (const h of inv.etcdHosts) {
    leaves.push(
      {
        id: 'etcd-server',
        file: `etcd/${h.name}/server`,
        host: h.name,
        ca: 'etcd-ca',
        cn: h.name,
        o: [],
        usage: 'peer',
        ...etcdHostSans(h),
        why: 'etcd client-facing serving cert; clientAuth too, as kubeadm does, for etcdctl on the host',
        placements: [at('etcd', 'etcd/server', ['etcd'])],
      },
      {
        id: 'etcd-peer',
        file: `etcd/${h.name}/peer`,
        host: h.name,
        ca: 'etcd-ca',
        cn: h.name,
        o: [],
        usage: 'peer',
        ...etcdHostSans(h),
        why: 'etcd member-to-member mTLS; each side is both server and client',
        placements: [at('etcd', 'etcd/peer', ['etcd'])],
      },
    );
  }
  return [...leaves, ...nodeCertLeaves(inv)];
}

function nodeRef(h: Host): NodeRef {
  return { name: h.name, address: h.address };
}

/** The certificates components declare in their specs (NodeCert), one per host that runs them. */
function nodeCertLeaves(inv: Inventory): LeafSpec[] {
  return COMPONENTS.flatMap((c) =>
    ((c as ComponentSpec<ComponentName>).certs ?? []).flatMap((cert) =>
      inv.hosts
        .filter((h) => hasRole(h, c.role))
        .map(
          (h): LeafSpec => ({
            id: cert.id,
            file: `${c.name}/${h.name}/${cert.id}`,
            host: h.name,
            ca: cert.ca,
            cn: cert.cn(nodeRef(h)),
            o: [...cert.o],
            usage: cert.usage,
            ...cert.sans(nodeRef(h)),
            why: cert.why,
            placements: [{ on: c.role, path: cert.path, readBy: [c.name], key: true }],
          }),
        ),
    ),
  );
}

/** The operator's own identities; components' come from their specs (kubeconfig). */
const OPERATOR_KUBECONFIGS: readonly KubeconfigSpec[] = [
  {
    id: 'admin',
    file: 'admin.conf',
    cn: 'kubernetes-admin',
    o: ['kubeadm:cluster-admins'],
    server: 'endpoint',
    on: 'control-plane',
    readBy: [],
    why: 'day-to-day admin; powerless until the kubeadm:cluster-admins binding exists, so it can be revoked',
    authorizedBy: { by: 'wire', binding: 'kubeadm:cluster-admins' },
  },
  {
    id: 'super-admin',
    file: 'super-admin.conf',
    cn: 'kubernetes-super-admin',
    o: ['system:masters'],
    server: 'endpoint',
    on: 'control-plane',
    readBy: [],
    why: 'break-glass only: system:masters bypasses RBAC and cannot be revoked',
    firstOnly: true,
    authorizedBy: { by: 'masters' },
  },
];

/** Every kubeconfig identity: the operator's, then each component's own (its spec's kubeconfig), in start order. */
export const KUBECONFIGS: readonly KubeconfigSpec[] = [
  ...OPERATOR_KUBECONFIGS,
  ...COMPONENTS.flatMap((c): KubeconfigSpec[] =>
    'kubeconfig' in c ? [{ ...c.kubeconfig, on: c.role, readBy: [c.name] }] : [],
  ),
];

/** One kubeconfig file: its identity, the client cert inside it, and where it lands (a per-node one: on its node only). */
export interface KubeconfigFile {
  spec: KubeconfigSpec;
  leaf: LeafSpec;
  placement: Placement;
  /** The node of a per-node identity. */
  host?: string;
}

function cnOf(k: KubeconfigIdentity, h?: Host): string {
  return typeof k.cn === 'string' ? k.cn : k.cn(nodeRef(h!));
}

/** Kubeconfig client certs, kept in the operator pki/ so re-runs are byte-stable; per node under kubeconfig/<id>/<host>. */
export function kubeconfigLeaf(k: KubeconfigSpec, h?: Host): LeafSpec {
  return {
    id: `kubeconfig-${k.id}`,
    file: h ? `kubeconfig/${k.id}/${h.name}` : `kubeconfig/${k.id}`,
    ...(h ? { host: h.name } : {}),
    ca: 'ca',
    cn: cnOf(k, h),
    o: [...k.o],
    usage: 'client',
    dns: [],
    ips: [],
    why: k.why,
    placements: [],
  };
}

/** Every kubeconfig file the inventory gets, in table order. */
export function kubeconfigFiles(inv: Inventory): KubeconfigFile[] {
  return KUBECONFIGS.flatMap((spec) => {
    const placement: Placement = {
      on: spec.on,
      path: `${K8S_DIR}/${spec.file}`,
      readBy: spec.readBy,
      key: false,
      ...(spec.firstOnly ? { firstOnly: true } : {}),
    };
    // None without a host to land on: a control-plane-only inventory issues no kube-proxy identity.
    const hosts = inv.hosts.filter((h) => hasRole(h, spec.on));
    if (!spec.perNode)
      return hosts.length > 0 ? [{ spec, leaf: kubeconfigLeaf(spec), placement }] : [];
    return hosts.map((h) => ({ spec, leaf: kubeconfigLeaf(spec, h), placement, host: h.name }));
  });
}

/** Other key material the operator keeps next to the certs: the service-account key pair and the encryption config. */
export interface SecretFile {
  file: string;
  private: boolean;
  placement: Placement;
}

export const SECRET_FILES: readonly SecretFile[] = [
  // The apiserver signs and verifies tokens with the pair; the controller-manager signs with the key.
  {
    file: 'sa.key',
    private: true,
    placement: {
      on: 'control-plane',
      path: `${PKI_DIR}/sa.key`,
      readBy: ['kube-apiserver', 'kube-controller-manager'],
      key: false,
    },
  },
  {
    file: 'sa.pub',
    private: false,
    placement: {
      on: 'control-plane',
      path: `${PKI_DIR}/sa.pub`,
      readBy: ['kube-apiserver'],
      key: false,
    },
  },
  {
    file: 'encryption-config.yaml',
    private: true,
    placement: {
      on: 'control-plane',
      path: `${K8S_DIR}/encryption-config.yaml`,
      readBy: ['kube-apiserver'],
      key: false,
    },
  },
];

/** Whether a placement applies to a host (per-host leaves pass their own host name). */
export function placedOn(p: Placement, inv: Inventory, host: Host, leafHost?: string): boolean {
  if (leafHost !== undefined && leafHost !== host.name) return false;
  if (!hasRole(host, p.on)) return false;
  return !p.firstOnly || inv.controlPlaneHosts[0]?.name === host.name;
}

export function allLeaves(inv: Inventory): LeafSpec[] {
  return [...leafTable(inv), ...kubeconfigFiles(inv).map((f) => f.leaf)];
}
