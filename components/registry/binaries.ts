// Every binary hardwire hands out, run components and tools alike, under one name type.
import type { BinarySpec } from './types.ts';

const kube = (pkg: string, probe: BinarySpec['probe'], why: string): BinarySpec => ({ group: 'kubernetes', goPackage: `k8s.io/kubernetes/cmd/${pkg}`, probe, why });
const kubeVersion: BinarySpec['probe'] = { args: ['--version'], expect: (v) => `Kubernetes ${v}` };
const etcdProbe = (prefix: string, args: string[]): BinarySpec['probe'] => ({ args, expect: (v) => `${prefix} ${v.replace(/^v/, '')}` });

export const BINARIES = {
  'kube-apiserver': kube('kube-apiserver', kubeVersion, 'runs as a component'),
  'kube-controller-manager': kube('kube-controller-manager', kubeVersion, 'runs as a component'),
  'kube-scheduler': kube('kube-scheduler', kubeVersion, 'runs as a component'),
  kubeadm: kube('kubeadm', { args: ['version', '-o', 'short'], expect: (v) => v }, 'tool: the kubeadm plane of `compare`'),
  kubectl: kube('kubectl', { args: ['version', '--client'], expect: (v) => `Client Version: ${v}` }, 'tool: for the operator, built with the rest'),
  // Both etcd module roots are main packages (server/v3 is etcd's own wrapper around etcdmain.Main).
  etcd: { group: 'etcd', goPackage: 'go.etcd.io/etcd/server/v3', probe: etcdProbe('etcd Version:', ['--version']), why: 'runs as a component' },
  etcdctl: { group: 'etcd', goPackage: 'go.etcd.io/etcd/etcdctl/v3', probe: etcdProbe('etcdctl version:', ['version']), why: 'tool: the etcd gate and snapshots, on etcd hosts' },
  // Offline snapshot status and restore (etcdctl's were removed in 3.6).
  etcdutl: { group: 'etcd', goPackage: 'go.etcd.io/etcd/etcdutl/v3', probe: etcdProbe('etcdutl version:', ['version']), why: 'tool: snapshot verify and restore' },
  k0s: { group: 'k0s', goPackage: 'github.com/k0sproject/k0s', probe: { args: ['version'], expect: (v) => v }, why: 'tool: the k0s plane of `compare`' },
} as const satisfies Record<string, BinarySpec>;

export type BinaryName = keyof typeof BINARIES;
export const BINARY_NAMES = Object.keys(BINARIES) as BinaryName[];

export function isBinaryName(s: string): s is BinaryName {
  return Object.hasOwn(BINARIES, s);
}
