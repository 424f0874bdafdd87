// Which components run on a host, in start order.
import type { Host } from '../../inventory/load.ts';
import type { ComponentName, ModelContext, UnitModel } from './types.ts';
import { etcdModel } from './etcd.ts';
import { apiserverModel } from './kube-apiserver.ts';
import { controllerManagerModel } from './kube-controller-manager.ts';
import { schedulerModel } from './kube-scheduler.ts';

export const START_ORDER: readonly ComponentName[] = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'];

const builders: Record<ComponentName, (ctx: ModelContext) => UnitModel> = {
  etcd: etcdModel,
  'kube-apiserver': apiserverModel,
  'kube-controller-manager': controllerManagerModel,
  'kube-scheduler': schedulerModel,
};

export function componentsOn(host: Host): ComponentName[] {
  return START_ORDER.filter((c) => (c === 'etcd' ? host.isEtcd : host.isControlPlane));
}

/** The inventory's extraArgs override a model flag's value, or add a flag after the model's. */
function withExtraArgs(m: UnitModel, extra: Record<string, string> | undefined): UnitModel {
  if (!extra) return m;
  const flags = m.flags.map((f) => (f.name in extra ? { ...f, value: extra[f.name]!, why: `${f.why} (value from inventory extraArgs)` } : f));
  for (const [name, value] of Object.entries(extra).sort(([a], [b]) => a.localeCompare(b))) {
    if (!m.flags.some((f) => f.name === name)) flags.push({ name, value, why: 'set in the inventory (cluster.extraArgs)' });
  }
  return { ...m, flags };
}

export function modelsFor(ctx: ModelContext): UnitModel[] {
  return componentsOn(ctx.host).map((c) => withExtraArgs(builders[c](ctx), ctx.inv.cluster.extraArgs[c]));
}

export type { ComponentName, UnitModel, Flag } from './types.ts';
