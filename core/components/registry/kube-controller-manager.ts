import { controllerManagerModel } from '../models/kube-controller-manager.ts';
import { leaseRenewingGate } from './gates.ts';
import { kubeBinary } from './binaries.ts';
import { kubeCommand, type ComponentSpec } from './types.ts';

export const kubeControllerManager = {
  name: 'kube-controller-manager',
  role: 'control-plane',
  binaries: {
    'kube-controller-manager': kubeBinary(
      'kube-controller-manager',
      'runs as the kube-controller-manager unit',
    ),
  },
  model: controllerManagerModel,
  flagTarget: kubeCommand('.', 'kube-controller-manager', 'NewControllerManagerCommand'),
  kubeconfig: {
    id: 'controller-manager',
    file: 'controller-manager.conf',
    cn: 'system:kube-controller-manager',
    o: [],
    server: 'local',
    why: 'identity bound by the built-in system:kube-controller-manager ClusterRole',
    authorizedBy: { by: 'builtIn', binding: 'system:kube-controller-manager', line: 701 },
  },
  // 10257: the default --secure-port (kubeadm's constants.KubeControllerManagerPort, cmd/kubeadm/app/constants/constants.go:414 at v1.36.3); the model leaves it unset.
  gate: leaseRenewingGate('kube-controller-manager', 'kube-controller-manager', 10257),
  // Same order as the scheduler: neither needs the other, so they start and gate together.
  listens: [{ port: 10257, why: 'the default --secure-port (health and metrics)' }],
  order: 30,
  stage: 'controllers',
  upgradeStep: 'controllers',
  lease: 'kube-controller-manager',
} as const satisfies ComponentSpec<'kube-controller-manager'>;
