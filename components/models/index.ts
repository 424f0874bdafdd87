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

export function modelsFor(ctx: ModelContext): UnitModel[] {
  return componentsOn(ctx.host).map((c) => builders[c](ctx));
}

export type { ComponentName, UnitModel, Flag } from './types.ts';
