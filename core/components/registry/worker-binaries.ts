// What a worker runs (issue 22): built from source like the rest, each with its version probe. The
// worker components' specs take theirs from here (containerd.ts, kubelet.ts, kube-proxy.ts); CoreDNS,
// pause, imagebuild and webhook go into the locally built images (components/images.ts), never onto a host.
import type { BinarySpec } from './types.ts';

/** As binaries.ts's kubeVersion (not imported: binaries.ts imports this file). */
const kubeVersion: BinarySpec['probe'] = { args: ['--version'], expect: (v) => `Kubernetes ${v}` };
const containerdVersion = (cmd: string): BinarySpec['probe'] => ({
  args: ['--version'],
  expect: (v) => `${cmd} github.com/containerd/containerd/v2 ${v}`,
});

/** A CNI plugin run without CNI_COMMAND prints "CNI <name> plugin v1.9.1" (pkg/utils/buildversion). */
function cniPlugin(dir: string, name: string, why: string): BinarySpec {
  return {
    group: 'cni-plugins',
    goPackage: `github.com/containernetworking/plugins/plugins/${dir}/${name}`,
    probe: { args: [], expect: (v) => `CNI ${name} plugin ${v}` },
    why,
  };
}

export const WORKER_BINARIES = {
  kubelet: {
    group: 'kubernetes-node',
    goPackage: 'k8s.io/kubernetes/cmd/kubelet',
    probe: kubeVersion,
    why: 'the node agent of a worker',
  },
  'kube-proxy': {
    group: 'kubernetes-node',
    goPackage: 'k8s.io/kubernetes/cmd/kube-proxy',
    probe: kubeVersion,
    why: 'ClusterIP Services on a worker',
  },
  // containerd as k0s v1.36.3+k0s.2 pins it (2.3.3@aad11006): the daemon, its runc shim, and ctr.
  containerd: {
    group: 'containerd',
    goPackage: 'github.com/containerd/containerd/v2/cmd/containerd',
    probe: containerdVersion('containerd'),
    why: 'the CRI runtime of a worker',
  },
  'containerd-shim-runc-v2': {
    group: 'containerd',
    goPackage: 'github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2',
    // It prints "containerd-shim-runc-v2:" and then "  Version:  v2.3.3" (cmd/containerd-shim-runc-v2, shim.go).
    probe: { args: ['-v'], expect: (v) => `Version:  ${v}` },
    why: 'the shim containerd runs each Pod sandbox under',
  },
  ctr: {
    group: 'containerd',
    goPackage: 'github.com/containerd/containerd/v2/cmd/ctr',
    probe: containerdVersion('ctr'),
    why: 'imports the locally built images; lists containers as evidence',
  },
  // cgo with libseccomp (apt: libseccomp-dev), linked statically as k0s does (runc_build_go_tags "seccomp").
  runc: {
    group: 'runc',
    goPackage: 'github.com/opencontainers/runc',
    probe: { args: ['--version'], expect: (v) => `runc version ${v.replace(/^v/, '')}` },
    why: 'the OCI runtime under containerd',
  },
  bridge: cniPlugin('main', 'bridge', 'Pod network: a bridge per node'),
  'host-local': cniPlugin('ipam', 'host-local', "Pod addresses from the node's pod CIDR"),
  loopback: cniPlugin('main', 'loopback', 'lo in each Pod'),
  portmap: cniPlugin('meta', 'portmap', 'hostPort mappings'),
  coredns: {
    group: 'coredns',
    goPackage: 'github.com/coredns/coredns',
    probe: { args: ['-version'], expect: (v) => `CoreDNS-${v.replace(/^v/, '')}` },
    why: 'cluster DNS (the version kubeadm v1.36.3 deploys)',
  },
  // Not Go: compiled statically from build/pause/linux/pause.c in the k8s.io/kubernetes module (components/binaries/cc.ts).
  pause: {
    group: 'pause',
    goPackage: 'k8s.io/kubernetes/build/pause/linux/pause.c',
    probe: { args: ['-v'], expect: (v) => `pause.c ${v}` },
    why: "the Pod sandbox image's one binary",
  },
  // hardwire's own image writer (components/go/imagebuild/main.go) on go-containerregistry: the
  // pause, busybox and CoreDNS images are built here, never pulled. It has no version flag of its
  // own; its Go build info names the library's version.
  imagebuild: {
    group: 'imagebuild',
    goPackage: 'hardwire.local/components/imagebuild',
    probe: {
      args: [],
      via: 'go-version-m',
      expect: (v) => `dep\tgithub.com/google/go-containerregistry\t${v}`,
    },
    why: "builds the workers' images locally (docker-archive for ctr import)",
  },
  // hardwire's own stage-2 validating webhook (components/go/webhook/main.go, stdlib only), run as a
  // Pod behind a Service: its version is the catalog's, stamped by the build (-X main.version).
  webhook: {
    group: 'webhook',
    goPackage: 'hardwire.local/components/webhook',
    probe: { args: ['-version'], expect: (v) => `hardwire-webhook ${v}` },
    why: 'the stage-2 admission webhook served by a Pod (image hardwire.local/webhook)',
  },
  // The CRI client kubeadm's docs list a node's containers with; urfave/cli prints "crictl version 1.37.0".
  crictl: {
    group: 'cri-tools',
    goPackage: 'sigs.k8s.io/cri-tools/cmd/crictl',
    probe: { args: ['--version'], expect: (v) => `crictl version ${v.replace(/^v/, '')}` },
    why: "lists a kubeadm plane host's containers over CRI (/etc/crictl.yaml names containerd's socket)",
  },
} as const satisfies Record<string, BinarySpec>;
