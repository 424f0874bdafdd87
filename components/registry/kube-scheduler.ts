import { schedulerModel } from '../models/kube-scheduler.ts';
import { leaseRenewingGate } from './gates.ts';
import { kubeBinary } from './binaries.ts';
import type { ComponentSpec } from './types.ts';

export const kubeScheduler = {
  name: 'kube-scheduler',
  role: 'control-plane',
  binaries: { 'kube-scheduler': kubeBinary('kube-scheduler', 'runs as the kube-scheduler unit') },
  model: schedulerModel,
  kubeconfig: 'scheduler',
  gate: leaseRenewingGate('kube-scheduler', 'kube-scheduler'),
  order: 30,
  stage: 'controllers',
  lease: 'kube-scheduler',
} as const satisfies ComponentSpec<'kube-scheduler'>;
