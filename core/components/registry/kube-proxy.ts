import { kubeProxyModel } from '../models/kube-proxy.ts';
import { kubeProxyGate } from '../../gates/node.ts';
import { WORKER_BINARIES as W } from './worker-binaries.ts';
import { kubeCommand, type ComponentSpec } from './types.ts';

export const kubeProxy = {
  name: 'kube-proxy',
  role: 'worker',
  binaries: { 'kube-proxy': W['kube-proxy'] },
  model: kubeProxyModel,
  flagTarget: {
    ...kubeCommand('node', 'kube-proxy', 'NewProxyCommand'),
    configType: 'k8s.io/kube-proxy/config/v1alpha1.KubeProxyConfiguration',
    internalConfigType: 'k8s.io/kubernetes/pkg/proxy/apis/config.KubeProxyConfiguration',
  },
  kubeconfig: {
    id: 'kube-proxy',
    file: 'kube-proxy.conf',
    cn: 'system:kube-proxy',
    o: [],
    server: 'endpoint',
    why: "one identity for every node's kube-proxy, as Kelsey Hightower's guide has it: it reads Services and EndpointSlices, the same on every node",
    authorizedBy: { by: 'builtIn', binding: 'system:node-proxier', line: 700 },
  },
  gate: kubeProxyGate,
  listens: [
    { port: 10256, why: 'the default healthzBindAddress' },
    { port: 10249, why: 'the default metricsBindAddress, on 127.0.0.1' },
  ],
  order: 50,
  stage: 'workers',
  upgradeStep: 'node',
} as const satisfies ComponentSpec<'kube-proxy'>;
