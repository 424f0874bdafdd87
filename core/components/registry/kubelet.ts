import { kubeletModel, KUBELET_SERVING } from '../models/kubelet.ts';
import { nodeReadyGate } from '../../gates/node.ts';
import { WORKER_BINARIES as W } from './worker-binaries.ts';
import { kubeCommand, type ComponentSpec } from './types.ts';

/** The Node authorizer's and NodeRestriction's form of a node's user name (K pkg/auth/nodeidentifier/default.go:37). */
const nodeUser = (n: { name: string }) => `system:node:${n.name}`;

export const kubelet = {
  name: 'kubelet',
  role: 'worker',
  binaries: { kubelet: W.kubelet },
  model: kubeletModel,
  // flags/analyzer/node: the kubelet's and kube-proxy's build list (components/go/kubernetes-node).
  flagTarget: {
    ...kubeCommand('node', 'kubelet', 'NewKubeletCommand'),
    configType: 'k8s.io/kubelet/config/v1beta1.KubeletConfiguration',
    internalConfigType: 'k8s.io/kubernetes/pkg/kubelet/apis/config.KubeletConfiguration',
  },
  kubeconfig: {
    id: 'kubelet',
    file: 'kubelet.conf',
    cn: nodeUser,
    o: ['system:nodes'],
    server: 'endpoint',
    perNode: true,
    why: "each node's own identity, so the Node authorizer lets a kubelet reach only what its own Pods need",
    // The Node authorizer (--authorization-mode=Node,RBAC) and NodeRestriction admission: no RBAC binding.
    authorizedBy: { by: 'node' },
  },
  certs: [
    {
      id: 'kubelet-server',
      ca: 'ca',
      cn: nodeUser,
      o: ['system:nodes'],
      usage: 'server',
      sans: (n) => ({ dns: [n.name], ips: [n.address] }),
      path: KUBELET_SERVING,
      why: "the kubelet's serving cert for logs, exec and port-forward, signed by the cluster CA as a kubelet-serving CSR would be, so the apiserver's --kubelet-certificate-authority verifies it",
    },
  ],
  gate: nodeReadyGate,
  listens: [
    { port: 10250, why: 'its API (logs, exec): kubeadm checks the same port (KubeletPort)' },
    { port: 10248, why: 'the default healthzPort, on 127.0.0.1' },
  ],
  order: 50,
  stage: 'workers',
  upgradeStep: 'node',
  // Its containerRuntimeEndpoint is containerd's socket.
  after: ['containerd'],
} as const satisfies ComponentSpec<'kubelet'>;
