// The inventory's cluster.extraArgs for etcd and the control plane, as kubeadm's ClusterConfiguration
// (v1beta4) carries them: a list of {name, value} under apiServer, controllerManager, scheduler and
// etcd.local. The same cluster's flags on both planes: kubeadm puts each one into the component's
// manifest as given, with no check against that binary's flag set (upgrade-section.ts cites where).
import type { ClusterParams, Component } from './types.ts';
import type { ControlPlaneName, PerComponent } from '../../core/components/registry/index.ts';

/** Where ClusterConfiguration holds each component's extraArgs. */
const PLACE: PerComponent<readonly [string, ...string[]], ControlPlaneName> = {
  etcd: ['etcd', 'local'],
  'kube-apiserver': ['apiServer'],
  'kube-controller-manager': ['controllerManager'],
  'kube-scheduler': ['scheduler'],
};

/** ClusterConfiguration's apiServer (certSANs too), controllerManager, scheduler and etcd keys; none when there is nothing to set. */
export function kubeadmComponentArgs(p: ClusterParams): Record<string, unknown> {
  const list = (c: Component) =>
    Object.entries(p.extraArgs?.[c] ?? {}).map(([name, value]) => ({ name, value }));
  const out: Record<string, Record<string, unknown>> = {};
  if (p.extraSANs.length) out.apiServer = { certSANs: p.extraSANs };
  for (const [c, path] of Object.entries(PLACE) as [Component, readonly string[]][]) {
    if (!list(c).length) continue;
    let at: Record<string, unknown> = out;
    for (const key of path) at = (at[key] ??= {}) as Record<string, unknown>;
    at.extraArgs = list(c);
  }
  return out;
}
