// Binary specs: how each is built and how it proves its version. A component's own binaries are
// declared in its spec; tools hardwire builds but does not run as a unit are declared here.
import type { BinarySpec } from './types.ts';

export const kubeVersion: BinarySpec['probe'] = { args: ['--version'], expect: (v) => `Kubernetes ${v}` };

/** A binary built from k8s.io/kubernetes/cmd/<name>. */
export function kubeBinary(name: string, why: string, probe: BinarySpec['probe'] = kubeVersion): BinarySpec {
  return { group: 'kubernetes', goPackage: `k8s.io/kubernetes/cmd/${name}`, probe, why };
}

/** etcd's binaries print "<prefix> 3.6.8". */
export function etcdBinary(goPackage: string, prefix: string, args: string[], why: string): BinarySpec {
  return { group: 'etcd', goPackage, probe: { args, expect: (v) => `${prefix} ${v.replace(/^v/, '')}` }, why };
}

export const TOOLS = {
  kubeadm: kubeBinary('kubeadm', 'the kubeadm plane of `compare`', { args: ['version', '-o', 'short'], expect: (v) => v }),
  kubectl: kubeBinary('kubectl', 'for the operator, built with the rest', { args: ['version', '--client'], expect: (v) => `Client Version: ${v}` }),
  k0s: { group: 'k0s', goPackage: 'github.com/k0sproject/k0s', probe: { args: ['version'], expect: (v) => v }, why: 'the k0s plane of `compare`' },
  // Built from the pinned source archive (components/binaries/sources.ts): the module proxy refuses
  // github.com/aquasecurity/kube-bench by name. It prints its version without the "v" (0.15.6).
  'kube-bench': {
    group: 'kube-bench', goPackage: '.', probe: { args: ['version'], expect: (v) => v.replace(/^v/, '') },
    why: '`hardwire cis`: the CIS benchmark, run on each control-plane host', assets: ['cfg'],
  },
} as const satisfies Record<string, BinarySpec>;
