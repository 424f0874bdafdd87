import { controllerManagerModel } from '../models/kube-controller-manager.ts';
import { leaseRenewingGate } from './gates.ts';
import { kubeBinary } from './binaries.ts';
import type { ComponentSpec } from './types.ts';

export const kubeControllerManager = {
  name: 'kube-controller-manager',
  role: 'control-plane',
  binaries: { 'kube-controller-manager': kubeBinary('kube-controller-manager', 'runs as the kube-controller-manager unit') },
  model: controllerManagerModel,
  kubeconfig: 'controller-manager',
  gate: leaseRenewingGate('kube-controller-manager', 'kube-controller-manager'),
  // Same order as the scheduler: neither needs the other, so they start and gate together.
  order: 30,
  stage: 'controllers',
  lease: 'kube-controller-manager',
} as const satisfies ComponentSpec<'kube-controller-manager'>;
