// The lab's image registry (issue 44): the CNCF distribution registry, built here from its Go
// module, on the first control-plane host of a cluster with workers. containerd on every worker
// names it as docker.io's mirror (models/containerd.ts, hosts.toml), so `kubectl run
// --image=busybox` pulls docker.io/library/busybox:latest from it and from nowhere else.
import { registryModel, REGISTRY_CERT, REGISTRY_PORT } from '../models/registry.ts';
import { registryGate } from '../../gates/registry.ts';
import { WORKER_BINARIES as W } from './worker-binaries.ts';
import type { ComponentSpec } from './types.ts';

export const registry = {
  name: 'registry',
  // The first control-plane host, when the cluster has workers (inventory/load.ts isRegistry):
  // it exists on every cluster, it holds the cluster CA's certificate that the push verifies the
  // registry with, and a lone registry needs no shared storage. Losing that host loses the mirror
  // until it is back; a Pod already running keeps its image.
  role: 'registry',
  // The daemon, then imagebuild: its ExecStartPost pushes the locally built images into it.
  binaries: {
    registry: {
      group: 'registry',
      goPackage: 'github.com/distribution/distribution/v3/cmd/registry',
      // "<argv0> github.com/distribution/distribution/v3 v3.0.0" (version/get.go:37, FprintVersion).
      probe: {
        args: ['--version'],
        argv0: true,
        expect: (v) => `github.com/distribution/distribution/v3 ${v}`,
      },
      why: 'runs as the registry unit: the lab mirror of docker.io that every worker pulls from',
    },
    imagebuild: W.imagebuild,
  },
  model: registryModel,
  certs: [
    {
      id: 'registry-server',
      ca: 'ca',
      cn: (n) => `registry.${n.name}`,
      o: [],
      usage: 'server',
      // The workers reach it at the host's address; its own push reaches it on loopback.
      sans: (n) => ({ dns: [n.name, 'localhost'], ips: [n.address, '127.0.0.1'] }),
      path: REGISTRY_CERT,
      why: "the registry's serving cert, signed by the cluster CA: containerd verifies it with the CA (hosts.toml `ca`), and so do its push and its gate",
    },
  ],
  gate: registryGate,
  listens: [{ port: REGISTRY_PORT, why: 'the registry API over HTTPS (http.addr), every address' }],
  // Before the kubelets: their first Pods may name a docker.io image. It needs nothing of the
  // cluster but its certificate, so it could start first; here it stands beside the workers'.
  order: 45,
  stage: 'registry',
  // Not Kubernetes: it changes only when its own module does; upgraded with the nodes.
  upgradeStep: 'node',
} as const satisfies ComponentSpec<'registry'>;
