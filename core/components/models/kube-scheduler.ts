import { flag, K, BIN, type ModelContext, type UnitModel } from './types.ts';

export function schedulerModel(_: ModelContext): UnitModel {
  const conf = `${K}/scheduler.conf`;
  return {
    component: 'kube-scheduler',
    description: 'Kubernetes scheduler (hardwire)',
    documentation:
      'https://kubernetes.io/docs/reference/command-line-tools-reference/kube-scheduler/',
    type: 'simple',
    binary: `${BIN}/kube-scheduler`,
    flags: [
      flag('authentication-kubeconfig', conf, 'delegated authn for its own /metrics and /healthz'),
      flag('authorization-kubeconfig', conf, 'delegated authz for its own /metrics and /healthz'),
      flag('bind-address', '127.0.0.1', 'serve its secure port on loopback only'),
      flag('kubeconfig', conf, 'its identity toward the apiserver (system:kube-scheduler)'),
      flag(
        'leader-elect',
        true,
        'only one replica schedules; holds the kube-system/kube-scheduler Lease',
      ),
      flag(
        'profiling',
        false,
        'no /debug/pprof on its secure port: profiles expose internals and cost CPU on demand (CIS 1.4.1)',
      ),
    ],
  };
}
