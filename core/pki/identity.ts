// The certificate table's terms for what a component's own spec declares: the kubeconfig identity
// it authenticates with, and the certificates it serves with on each of its hosts. Types only, so
// the registry can name them without importing the table (which reads the registry).
export type CaId = 'ca' | 'front-proxy-ca' | 'etcd-ca';
export type Usage = 'server' | 'client' | 'peer';

/**
 * What grants an identity its rights, so that none is issued without a reason it can act:
 * - builtIn: a ClusterRoleBinding of the apiserver's RBAC bootstrap policy, at `line` of
 *   k8s.io/kubernetes@v1.36.3 plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go (checked
 *   against the pinned source, with the user it binds, by test/worker-citations.test.ts);
 * - node: the Node authorizer and NodeRestriction, for system:node:<name> in group system:nodes;
 * - wire: a ClusterRoleBinding wire creates (apply/phases/rbac.ts);
 * - masters: group system:masters, allowed everything before any authorizer.
 */
export type Authorization =
  | { by: 'builtIn'; binding: string; line: number }
  | { by: 'node' }
  | { by: 'wire'; binding: string }
  | { by: 'masters' };

/** The node a per-node identity or certificate is for. */
export interface NodeRef {
  name: string;
  address: string;
}

export interface KubeconfigIdentity {
  /** Operator-side name: pki/kubeconfig/<id>.{crt,key}, and the leaf id kubeconfig-<id>. */
  id: string;
  /** File name under /etc/kubernetes/ on the host. */
  file: string;
  /** The user the apiserver sees; per node, from the node. */
  cn: string | ((node: NodeRef) => string);
  o: readonly string[];
  /** Where the client connects: the cluster endpoint, or the host's own apiserver. */
  server: 'endpoint' | 'local';
  why: string;
  /** What grants this user its rights in the cluster. */
  authorizedBy: Authorization;
  /** One certificate per host that runs the component (a kubelet's node identity). */
  perNode?: boolean;
}

/** A certificate the component serves with, one per host that runs it, signed by `ca`. */
export interface NodeCert {
  /** Leaf id, and the name `certs check`/`certs renew` use. */
  id: string;
  ca: CaId;
  cn: (node: NodeRef) => string;
  o: readonly string[];
  usage: Usage;
  sans: (node: NodeRef) => { dns: string[]; ips: string[] };
  /** Absolute path on the host, without .crt/.key. */
  path: string;
  why: string;
}
