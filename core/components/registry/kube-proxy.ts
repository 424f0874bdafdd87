import { kubeProxyModel } from '../models/kube-proxy.ts';
import { notStartedGate } from './gates.ts';
import { kubeCommand, type ComponentSpec } from './types.ts';

const NOT_STARTED = 'wire renders and pushes the workers\' units; their start phase and gates (a Service reached from a Pod) come with the rest of issue 22';

export const kubeProxy = {
  name: 'kube-proxy',
  role: 'worker',
  // Built on branch workers (components/registry/worker-binaries.ts); moves here when it is integrated.
  binaries: {},
  model: kubeProxyModel,
  flagTarget: kubeCommand('node', 'kube-proxy', 'NewProxyCommand'),
  kubeconfig: {
    id: 'kube-proxy', file: 'kube-proxy.conf', cn: 'system:kube-proxy', o: [], server: 'endpoint',
    why: 'one identity for every node\'s kube-proxy, as Kelsey Hightower\'s guide has it: it reads Services and EndpointSlices, the same on every node',
    authorizedBy: { by: 'builtIn', binding: 'system:node-proxier', line: 700 },
  },
  gate: notStartedGate(NOT_STARTED),
  order: 50,
  stage: 'workers',
  notStarted: NOT_STARTED,
} as const satisfies ComponentSpec<'kube-proxy'>;
