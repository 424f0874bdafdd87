// The component registry: every component hardwire runs, in start order. Everything that lists
// components (hosts' units and binaries, start and restart order, gates, Leases, compare, the flag
// map, the inventory's extraArgs keys) derives from this list. Adding a component: its spec file,
// its model, and one line here (docs/adding-a-component.md).
import { etcd } from './etcd.ts';
import { kubeApiserver } from './kube-apiserver.ts';
import { kubeVip } from './kube-vip.ts';
import { kubeControllerManager } from './kube-controller-manager.ts';
import { kubeScheduler } from './kube-scheduler.ts';
import { containerd } from './containerd.ts';
import { kubelet } from './kubelet.ts';
import { kubeProxy } from './kube-proxy.ts';
import { registry } from './registry.ts';
import { TOOLS } from './binaries.ts';
import {
  runsOn,
  UPGRADE_STEPS,
  type UpgradeStep,
  type BinarySpec,
  type ComponentSpec,
  type FlagTarget,
  type HostRoles,
} from './types.ts';

export const COMPONENTS = [
  etcd,
  kubeApiserver,
  kubeVip,
  kubeControllerManager,
  kubeScheduler,
  containerd,
  registry,
  kubelet,
  kubeProxy,
] as const satisfies readonly ComponentSpec[];

type Spec = (typeof COMPONENTS)[number];
export type ComponentName = Spec['name'];
/** Components the flag map covers: those with a flagTarget. */
export type FlagComponentName = Extract<Spec, { flagTarget: unknown }>['name'];
/** etcd and the control plane: what compare, prove and kubeadm's plane cover (not kube-vip, which neither kubeadm nor k0s runs by default, nor the lab's image registry). */
export type ControlPlaneName = Exclude<Spec, { role: 'worker' | 'vip' | 'registry' }>['name'];
/**
 * A table with one row per component (of K): a component added to the registry without its row
 * fails tsc at the table, so nothing per component is left to a default by accident.
 */
export type PerComponent<T, K extends ComponentName = ComponentName> = { readonly [C in K]: T };

/** A per-component table's row for a name that may not be one of its components. */
export function rowOf<T, K extends ComponentName>(
  table: PerComponent<T, K>,
  name: string,
): T | undefined {
  return Object.hasOwn(table, name) ? table[name as K] : undefined;
}

/** Names in start order. */
export const COMPONENT_NAMES = COMPONENTS.map(
  (c) => c.name,
) as readonly ComponentName[] as readonly [ComponentName, ...ComponentName[]];

const byName = new Map<string, ComponentSpec<ComponentName>>(COMPONENTS.map((c) => [c.name, c]));

export function specOf(name: ComponentName): ComponentSpec<ComponentName> {
  return byName.get(name)!;
}

/** Components the flag map covers: those with a flagTarget. */
export const FLAG_MAP_NAMES = COMPONENT_NAMES.filter(
  (n) => specOf(n).flagTarget !== undefined,
) as readonly FlagComponentName[];

/** Components in upgrade order (the version-skew policy's steps), grouped by step. */
export const UPGRADE_GROUPS: readonly { step: UpgradeStep; components: ComponentName[] }[] =
  UPGRADE_STEPS.map((step) => ({
    step,
    components: COMPONENT_NAMES.filter((n) => specOf(n).upgradeStep === step),
  })).filter((g) => g.components.length > 0);

/** The analyzer's component list (flags/analyzer/main.go), in registry order. */
export function flagTargets(): ({ name: ComponentName } & FlagTarget)[] {
  return COMPONENT_NAMES.flatMap((name) => {
    const t = specOf(name).flagTarget;
    return t ? [{ name, ...t }] : [];
  });
}

/** Components a host runs, in start order. */
export function componentsOn(host: HostRoles): ComponentName[] {
  return COMPONENTS.filter((c) => runsOn(c, host)).map((c) => c.name);
}

/** Binaries a host needs, and which component reads each (a change restarts it; tools restart nothing). */
export function binariesFor(host: HostRoles): { name: BinaryName; readBy: ComponentName[] }[] {
  return COMPONENTS.filter((c) => runsOn(c, host)).flatMap((c) =>
    (Object.keys(c.binaries) as BinaryName[]).map((name, i) => ({
      name,
      readBy: i === 0 ? [c.name] : [],
    })),
  );
}

/** Components that elect a leader, with their Lease in kube-system. */
export const LEASES: readonly { component: ComponentName; lease: string }[] = COMPONENTS.flatMap(
  (c) => ('lease' in c ? [{ component: c.name, lease: c.lease }] : []),
);

/** Components whose fresh start is queued behind `component`'s on the same host (queueFreshStart, After= it). */
export function queuedBehind(component: ComponentName): ComponentName[] {
  return COMPONENT_NAMES.filter(
    (n) => specOf(n).queueFreshStart === true && (specOf(n).after ?? []).includes(component),
  );
}

/** Components that start together, in order: one wire phase each. */
export interface Stage {
  id: string;
  components: ComponentName[];
}

export const STAGES: readonly Stage[] = [...new Set<number>(COMPONENTS.map((c) => c.order))]
  .sort((a, b) => a - b)
  .map((order) => {
    const cs = COMPONENTS.filter((c) => c.order === order);
    return { id: cs[0]!.stage, components: cs.map((c) => c.name) };
  });

type KeysOf<T> = T extends unknown ? keyof T : never;
/** Every binary hardwire hands out, components' and tools', under one name type. */
export type BinaryName = (keyof typeof TOOLS | KeysOf<(typeof COMPONENTS)[number]['binaries']>) &
  string;
export const BINARIES = Object.assign({}, ...COMPONENTS.map((c) => c.binaries), TOOLS) as Record<
  BinaryName,
  BinarySpec
>;
export const BINARY_NAMES = Object.keys(BINARIES) as BinaryName[];

export function isBinaryName(s: string): s is BinaryName {
  return Object.hasOwn(BINARIES, s);
}

export type {
  UpgradeStep,
  ComponentSpec,
  BinarySpec,
  BinaryGroup,
  FlagTarget,
  GateContext,
  Check,
} from './types.ts';
