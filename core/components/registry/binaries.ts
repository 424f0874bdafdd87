// Binary specs: how each is built and how it proves its version. A component's own binaries are
// declared in its spec; tools hardwire builds but does not run as a unit are declared here.
import type { BinarySpec } from './types.ts';
import { WORKER_BINARIES } from './worker-binaries.ts';

export const kubeVersion: BinarySpec['probe'] = {
  args: ['--version'],
  expect: (v) => `Kubernetes ${v}`,
};

/** A binary built from k8s.io/kubernetes/cmd/<name>. */
export function kubeBinary(
  name: string,
  why: string,
  probe: BinarySpec['probe'] = kubeVersion,
): BinarySpec {
  return { group: 'kubernetes', goPackage: `k8s.io/kubernetes/cmd/${name}`, probe, why };
}

/** etcd's binaries print "<prefix> 3.6.8". */
export function etcdBinary(
  goPackage: string,
  prefix: string,
  args: string[],
  why: string,
): BinarySpec {
  return {
    group: 'etcd',
    goPackage,
    probe: { args, expect: (v) => `${prefix} ${v.replace(/^v/, '')}` },
    why,
  };
}

/** A Kubernetes command built for delve (-N -l, symbols kept) for `flags prove`. */
function debugBinary(name: string): BinarySpec {
  return {
    group: 'kubernetes-debug',
    goPackage: `k8s.io/kubernetes/cmd/${name}`,
    probe: kubeVersion,
    why: `\`flags prove\`: ${name} built for delve (-N -l, symbols kept)`,
  };
}

export const TOOLS = {
  kubeadm: kubeBinary('kubeadm', 'the kubeadm plane of `compare`', {
    args: ['version', '-o', 'short'],
    expect: (v) => v,
  }),
  kubectl: kubeBinary('kubectl', 'for the operator, built with the rest', {
    args: ['version', '--client'],
    expect: (v) => `Client Version: ${v}`,
  }),
  // Built from the pinned source archive (components/binaries/sources.ts) without embedded
  // binaries: k0s then runs the component binaries it finds in /var/lib/k0s/bin.
  k0s: {
    group: 'k0s',
    goPackage: '.',
    probe: { args: ['version'], expect: (v) => v },
    why: 'the k0s plane of `compare`',
  },
  // What k0s v1.36.3+k0s.2 runs beside the Kubernetes binaries (its embedded-bins/Makefile.variables).
  'k0s-etcd': {
    group: 'k0s-etcd',
    goPackage: 'go.etcd.io/etcd/server/v3',
    probe: { args: ['--version'], expect: (v) => `etcd Version: ${v.replace(/^v/, '')}` },
    why: 'the etcd k0s pins (3.6.14), staged as etcd in the k0s plane',
  },
  'konnectivity-server': {
    group: 'konnectivity',
    goPackage: 'sigs.k8s.io/apiserver-network-proxy/cmd/server',
    probe: {
      args: [],
      via: 'go-version-m',
      expect: (v) => `mod\tsigs.k8s.io/apiserver-network-proxy\t${v}`,
    },
    why: 'k0s runs it by default; staged in the k0s plane',
  },
  // Built from the pinned source archive (components/binaries/sources.ts): the module proxy refuses
  // github.com/aquasecurity/kube-bench by name. It prints its version without the "v" (0.15.6).
  'kube-bench': {
    group: 'kube-bench',
    goPackage: '.',
    probe: { args: ['version'], expect: (v) => v.replace(/^v/, '') },
    why: '`hardwire cis`: the CIS benchmark, run on each control-plane host',
    assets: ['cfg'],
  },
  // `flags prove` (issue 25): run on a host under dlv in place of the unit's binary, then removed.
  'kube-scheduler-debug': debugBinary('kube-scheduler'),
  'kube-controller-manager-debug': debugBinary('kube-controller-manager'),
  'kube-apiserver-debug': debugBinary('kube-apiserver'),
  'etcd-debug': {
    ...etcdBinary(
      'go.etcd.io/etcd/server/v3',
      'etcd Version:',
      ['--version'],
      '`flags prove`: etcd built for delve (-N -l, symbols kept)',
    ),
    group: 'etcd-debug',
  },
  dlv: {
    group: 'delve',
    goPackage: 'github.com/go-delve/delve/cmd/dlv',
    probe: { args: ['version'], expect: (v) => `Version: ${v.replace(/^v/, '')}` },
    why: '`flags prove`: the debugger the debug builds run under',
  },
  // Built here and put into the workers' images (components/images.ts), never onto a host.
  coredns: WORKER_BINARIES.coredns,
  pause: WORKER_BINARIES.pause,
  imagebuild: WORKER_BINARIES.imagebuild,
  webhook: WORKER_BINARIES.webhook,
  // The metrics-server addon's one binary (cluster.addons, core/addons/metrics-server.ts): into an
  // image the lab registry serves as registry.k8s.io's, never onto a host. `--version` prints
  // client-go's gitVersion (cmd/metrics-server/app/start.go:71).
  'metrics-server': {
    group: 'metrics-server',
    goPackage: 'sigs.k8s.io/metrics-server/cmd/metrics-server',
    probe: { args: ['--version'], expect: (v) => v },
    why: 'the metrics-server addon: the metrics.k8s.io APIService behind `kubectl top`',
  },
  // On kubeadm plane hosts only (compare), beside containerd.
  crictl: WORKER_BINARIES.crictl,
} as const satisfies Record<string, BinarySpec>;
