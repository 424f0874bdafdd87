// The components hardwire can hand out: which binaries exist, which versions go together,
// and how each binary proves its version. Pure data and lookups; no I/O.
import { InputError } from '../../lib/errors.ts';
import { PINNED_KUBERNETES } from '../../inventory/schema.ts';

export const KUBERNETES_NAMES = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubeadm', 'kubectl'] as const;
export const ETCD_NAMES = ['etcd', 'etcdctl', 'etcdutl'] as const;
export const K0S_NAMES = ['k0s'] as const;
export const COMPONENT_NAMES = [...KUBERNETES_NAMES, ...ETCD_NAMES, ...K0S_NAMES] as const;

export type ComponentName = (typeof COMPONENT_NAMES)[number];
/** Binaries that share one upstream release and one Go module. */
export type ComponentGroup = 'kubernetes' | 'etcd' | 'k0s';
export type SourceKind = 'local' | 'fetch' | 'build';

export interface VersionSet {
  kubernetes: string;
  /** The etcd that kubeadm of this Kubernetes release defaults to (constants.DefaultEtcdVersion). */
  etcd: string;
  /** The k0s release that ships this Kubernetes version. */
  k0s: string;
  /** Commit of the k0s tag: Go module versions cannot carry "+k0s.N", so Go resolves the tag by commit. */
  k0sCommit: string;
}

/**
 * Versions that go together. Add a row when pinning a new Kubernetes release: etcd from
 * kubeadm's cmd/kubeadm/app/constants/constants.go (DefaultEtcdVersion), k0s from its releases.
 */
export const VERSION_TABLE: readonly VersionSet[] = [
  { kubernetes: 'v1.36.3', etcd: 'v3.6.8', k0s: 'v1.36.3+k0s.2', k0sCommit: 'a949c71b' },
];

export const DEFAULT_KUBERNETES = PINNED_KUBERNETES;

export function versionsFor(kubernetesVersion: string = DEFAULT_KUBERNETES): VersionSet {
  const row = VERSION_TABLE.find((r) => r.kubernetes === kubernetesVersion);
  if (!row) {
    const known = VERSION_TABLE.map((r) => r.kubernetes).join(', ');
    throw new InputError('kubernetesVersion', `${kubernetesVersion} has no etcd/k0s pairing in components/binaries/catalog.ts (known: ${known}); add a row to VERSION_TABLE or use a known version`);
  }
  return row;
}

export function isComponentName(s: string): s is ComponentName {
  return (COMPONENT_NAMES as readonly string[]).includes(s);
}

export function parseNames(args: string[], field = 'names'): ComponentName[] {
  if (args.length === 0) return [...COMPONENT_NAMES];
  const out: ComponentName[] = [];
  for (const a of args) {
    if (a === 'kubernetes') { out.push(...KUBERNETES_NAMES); continue; }
    if (!isComponentName(a)) throw new InputError(field, `unknown component "${a}"; valid names are ${COMPONENT_NAMES.join(', ')} (or "kubernetes" for all five Kubernetes binaries)`);
    out.push(a);
  }
  return [...new Set(out)];
}

export function groupOf(name: ComponentName): ComponentGroup {
  if ((KUBERNETES_NAMES as readonly string[]).includes(name)) return 'kubernetes';
  if ((ETCD_NAMES as readonly string[]).includes(name)) return 'etcd';
  return 'k0s';
}

export function versionOf(name: ComponentName, set: VersionSet): string {
  return set[groupOf(name)];
}

/** How a binary states its version, and what the answer must contain. */
export interface VersionProbe {
  args: string[];
  expect: (version: string) => string;
}

export const VERSION_PROBES: Record<ComponentName, VersionProbe> = {
  'kube-apiserver': { args: ['--version'], expect: (v) => `Kubernetes ${v}` },
  'kube-controller-manager': { args: ['--version'], expect: (v) => `Kubernetes ${v}` },
  'kube-scheduler': { args: ['--version'], expect: (v) => `Kubernetes ${v}` },
  kubeadm: { args: ['version', '-o', 'short'], expect: (v) => v },
  kubectl: { args: ['version', '--client'], expect: (v) => `Client Version: ${v}` },
  etcd: { args: ['--version'], expect: (v) => `etcd Version: ${v.replace(/^v/, '')}` },
  etcdctl: { args: ['version'], expect: (v) => `etcdctl version: ${v.replace(/^v/, '')}` },
  etcdutl: { args: ['version'], expect: (v) => `etcdutl version: ${v.replace(/^v/, '')}` },
  k0s: { args: ['version'], expect: (v) => v },
};

/** Go package of each binary, inside its group's module. */
export const GO_PACKAGES: Record<ComponentName, string> = {
  'kube-apiserver': 'k8s.io/kubernetes/cmd/kube-apiserver',
  'kube-controller-manager': 'k8s.io/kubernetes/cmd/kube-controller-manager',
  'kube-scheduler': 'k8s.io/kubernetes/cmd/kube-scheduler',
  kubeadm: 'k8s.io/kubernetes/cmd/kubeadm',
  kubectl: 'k8s.io/kubernetes/cmd/kubectl',
  // Both module roots are main packages (server/v3 is etcd's own wrapper around etcdmain.Main).
  etcd: 'go.etcd.io/etcd/server/v3',
  etcdctl: 'go.etcd.io/etcd/etcdctl/v3',
  // Offline snapshot status and restore (etcdctl's were removed in 3.6).
  etcdutl: 'go.etcd.io/etcd/etcdutl/v3',
  k0s: 'github.com/k0sproject/k0s',
};

export function goArch(): string {
  const map: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', riscv64: 'riscv64' };
  const a = map[process.arch];
  if (!a) throw new InputError('arch', `${process.arch} has no upstream release binaries; use --from DIR`);
  return a;
}
