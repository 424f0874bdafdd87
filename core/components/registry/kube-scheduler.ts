import { schedulerModel } from '../models/kube-scheduler.ts';
import { leaseRenewingGate } from './gates.ts';
import { kubeBinary } from './binaries.ts';
import { kubeCommand, type ComponentSpec } from './types.ts';

export const kubeScheduler = {
  name: 'kube-scheduler',
  role: 'control-plane',
  binaries: { 'kube-scheduler': kubeBinary('kube-scheduler', 'runs as the kube-scheduler unit') },
  model: schedulerModel,
  flagTarget: kubeCommand('.', 'kube-scheduler', 'NewSchedulerCommand'),
  kubeconfig: {
    id: 'scheduler',
    file: 'scheduler.conf',
    cn: 'system:kube-scheduler',
    o: [],
    server: 'local',
    why: "identity bound by the built-in system:kube-scheduler ClusterRole (CN, not KTHW's O=system:system:kube-scheduler)",
    authorizedBy: { by: 'builtIn', binding: 'system:kube-scheduler', line: 703 },
  },
  // 10259: the default --secure-port (pkg/scheduler/apis/config/types.go:31 DefaultKubeSchedulerPort at v1.36.3); the model leaves it unset.
  gate: leaseRenewingGate('kube-scheduler', 'kube-scheduler', 10259),
  listens: [{ port: 10259, why: 'the default --secure-port (health and metrics)' }],
  order: 30,
  stage: 'controllers',
  upgradeStep: 'controllers',
  lease: 'kube-scheduler',
} as const satisfies ComponentSpec<'kube-scheduler'>;
