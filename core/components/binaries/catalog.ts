// The components hardwire can hand out: which binaries exist, which versions go together,
// and how each binary proves its version. Pure data and lookups; no I/O.
import { InputError } from '../../../lib/errors.ts';
import { PINNED_KUBERNETES } from '../../../lib/constants.ts';
import {
  BINARIES,
  BINARY_NAMES,
  isBinaryName,
  type BinaryGroup,
  type BinaryName,
} from '../registry/index.ts';

// Every binary has one name type, BinaryName, from the registry's catalog (components/registry/binaries.ts).
const inGroup = (g: BinaryGroup) => BINARY_NAMES.filter((n) => BINARIES[n].group === g);
export const KUBERNETES_NAMES = inGroup('kubernetes');
export const ETCD_NAMES = inGroup('etcd');
export const K0S_NAMES = inGroup('k0s');
/** What a worker runs (issue 22); `components build workers` builds them all. */
export const WORKER_GROUPS: readonly BinaryGroup[] = [
  'kubernetes-node',
  'containerd',
  'runc',
  'cni-plugins',
  'coredns',
  'pause',
  'imagebuild',
  'webhook',
  'cri-tools',
];
export const WORKER_NAMES = BINARY_NAMES.filter((n) => WORKER_GROUPS.includes(BINARIES[n].group));
export type SourceKind = 'local' | 'fetch' | 'build';

export interface VersionSet {
  kubernetes: string;
  /** The etcd that kubeadm of this Kubernetes release defaults to (constants.DefaultEtcdVersion). */
  etcd: string;
  /** The k0s release that ships this Kubernetes version. */
  k0s: string;
  /** Commit of the k0s tag: Go module versions cannot carry "+k0s.N", so Go resolves the tag by commit. */
  k0sCommit: string;
  /** The kube-bench release whose cfg/ has a CIS benchmark for this Kubernetes minor (cis-1.12). */
  'kube-bench': string;
  /** etcd and konnectivity as that k0s release pins them (embedded-bins/Makefile.variables). */
  'k0s-etcd': string;
  konnectivity: string;
  /** kubelet and kube-proxy: the same Kubernetes release, from a module of their own (components/go/kubernetes-node). */
  'kubernetes-node': string;
  /** containerd and runc as that k0s release pins them (containerd_version_and_rev, runc_version). */
  containerd: string;
  /** The containerd commit of that tag (containerd_version_and_rev after the "@"), stamped as its Revision. */
  containerdRevision: string;
  runc: string;
  /** k0s names no CNI plugins release in embedded-bins; its go.mod requires this one. */
  'cni-plugins': string;
  /** kubeadm's CoreDNSVersion (cmd/kubeadm/app/constants/constants.go). */
  coredns: string;
  /** kubeadm's PauseVersion; the image is built from build/pause/linux/pause.c of the same module. */
  pause: string;
  /** go-containerregistry, under hardwire's image writer (components/go/imagebuild). */
  imagebuild: string;
  /** hardwire's own webhook (components/go/webhook): no dependencies, so the version is hardwire's, stamped into it. */
  webhook: string;
  /** crictl (components/go/cri-tools): the proxy serves v1.34.0 and v1.37.0 of sigs.k8s.io/cri-tools, none for v1.36. */
  'cri-tools': string;
  /** kube-vip (components/go/kube-vip): the proxy refuses its version list and serves v1.0.0. */
  'kube-vip': string;
  /** The CNCF distribution registry (components/go/registry): the lab's docker.io mirror (issue 44). */
  registry: string;
  /** metrics-server (components/go/metrics-server): the opt-in addon behind `kubectl top` (issue 44). */
  'metrics-server': string;
  /** Debug builds (`flags prove`, issue 25): the same Kubernetes and etcd modules, -gcflags=all=-N -l, symbols kept. */
  'kubernetes-debug': string;
  'etcd-debug': string;
  /** The debugger they run under (components/go/delve). */
  delve: string;
}

/**
 * Versions that go together. Add a row when pinning a new Kubernetes release: etcd from
 * kubeadm's cmd/kubeadm/app/constants/constants.go (DefaultEtcdVersion), k0s from its releases.
 */
export const VERSION_TABLE: readonly VersionSet[] = [
  {
    kubernetes: 'v1.36.3',
    etcd: 'v3.6.8',
    k0s: 'v1.36.3+k0s.2',
    k0sCommit: 'a949c71b',
    'kube-bench': 'v0.15.6',
    'k0s-etcd': 'v3.6.14',
    konnectivity: 'v0.36.0',
    'kubernetes-node': 'v1.36.3',
    containerd: 'v2.3.3',
    containerdRevision: 'aad11006b869517fcd3009450b6f82da282e1a9b',
    runc: 'v1.4.3',
    'cni-plugins': 'v1.9.1',
    coredns: 'v1.14.2',
    pause: 'v3.10.2',
    imagebuild: 'v0.22.1',
    webhook: 'v0.2.0',
    'cri-tools': 'v1.37.0',
    'kube-vip': 'v1.0.0',
    registry: 'v3.0.0',
    'metrics-server': 'v0.8.0',
    'kubernetes-debug': 'v1.36.3',
    'etcd-debug': 'v3.6.8',
    delve: 'v1.27.2',
  },
  // The upgrade target (issue 24): etcd is kubeadm v1.37.2's DefaultEtcdVersion
  // (cmd/kubeadm/app/constants/constants.go). `upgrade apply` replaces only the Kubernetes binaries
  // and etcd; the rest is the v1.36.3 row's (no k0s ships v1.37.2; containerd, runc, CNI, CoreDNS and
  // pause stay as wired).
  {
    kubernetes: 'v1.37.2',
    etcd: 'v3.7.0',
    k0s: 'v1.36.3+k0s.2',
    k0sCommit: 'a949c71b',
    'kube-bench': 'v0.15.6',
    'k0s-etcd': 'v3.6.14',
    konnectivity: 'v0.36.0',
    'kubernetes-node': 'v1.37.2',
    containerd: 'v2.3.3',
    containerdRevision: 'aad11006b869517fcd3009450b6f82da282e1a9b',
    runc: 'v1.4.3',
    'cni-plugins': 'v1.9.1',
    coredns: 'v1.14.2',
    pause: 'v3.10.2',
    imagebuild: 'v0.22.1',
    webhook: 'v0.2.0',
    'cri-tools': 'v1.37.0',
    'kube-vip': 'v1.0.0',
    registry: 'v3.0.0',
    'metrics-server': 'v0.8.0',
    'kubernetes-debug': 'v1.37.2',
    'etcd-debug': 'v3.7.0',
    delve: 'v1.27.2',
  },
];

/**
 * etcd releases an upgrade passes through without a Kubernetes release of their own: the patch a
 * member must reach before the next minor (core/upgrade/etcd.ts MINOR_ENTRY). Built like the
 * paired ones, from core/components/go/etcd@<version>.
 */
export const ETCD_STEPS: readonly string[] = ['v3.6.16'];

/** Every etcd version hardwire builds: the table's pairings and the steps between them. */
export function etcdVersions(): string[] {
  return [...new Set([...VERSION_TABLE.map((r) => r.etcd), ...ETCD_STEPS])];
}

export const DEFAULT_KUBERNETES = PINNED_KUBERNETES;

export function versionsFor(kubernetesVersion: string = DEFAULT_KUBERNETES): VersionSet {
  const row = VERSION_TABLE.find((r) => r.kubernetes === kubernetesVersion);
  if (!row) {
    const known = VERSION_TABLE.map((r) => r.kubernetes).join(', ');
    throw new InputError(
      'kubernetesVersion',
      `${kubernetesVersion} has no etcd/k0s pairing in core/components/binaries/catalog.ts (known: ${known}); add a row to VERSION_TABLE or use a known version`,
    );
  }
  return row;
}

export function parseNames(args: string[], field = 'names'): BinaryName[] {
  if (args.length === 0) return [...BINARY_NAMES];
  const out: BinaryName[] = [];
  for (const a of args) {
    if (a === 'kubernetes') {
      out.push(...KUBERNETES_NAMES);
      continue;
    }
    if (a === 'workers') {
      out.push(...WORKER_NAMES);
      continue;
    }
    if (!isBinaryName(a))
      throw new InputError(
        field,
        `unknown component "${a}"; valid names are ${BINARY_NAMES.join(', ')} (or "kubernetes" for all five Kubernetes binaries, "workers" for what a worker runs)`,
      );
    out.push(a);
  }
  return [...new Set(out)];
}

export function groupOf(name: BinaryName): BinaryGroup {
  return BINARIES[name].group;
}

export function versionOf(name: BinaryName, set: VersionSet): string {
  return set[groupOf(name)];
}

/** How a binary states its version, and what the answer must contain. */
export type VersionProbe = (typeof BINARIES)[BinaryName]['probe'];
export const VERSION_PROBES = Object.fromEntries(
  BINARY_NAMES.map((n) => [n, BINARIES[n].probe]),
) as Record<BinaryName, VersionProbe>;

/** Go package of each binary, inside its group's module. */
export const GO_PACKAGES = Object.fromEntries(
  BINARY_NAMES.map((n) => [n, BINARIES[n].goPackage]),
) as Record<BinaryName, string>;

export function goArch(): string {
  const map: Record<string, string> = {
    x64: 'amd64',
    arm64: 'arm64',
    arm: 'arm',
    riscv64: 'riscv64',
  };
  const a = map[process.arch];
  if (!a)
    throw new InputError(
      'arch',
      `${process.arch} has no upstream release binaries; use --from DIR`,
    );
  return a;
}
