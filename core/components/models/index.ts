// The unit models a host gets: each component's model (from the registry), in start order, with
// the inventory's extraArgs applied.
import { componentsOn, specOf, type ComponentName } from '../registry/index.ts';
import { withExtra, type ModelContext, type UnitModel as AnyUnitModel } from './types.ts';
import { describeWeakenings, weakeningsOf } from '../../validate/weakening.ts';

/**
 * The inventory's extraArgs override a model flag's value (a list flag keeps hardwire's entries and
 * adds the inventory's), or add a flag after the model's. An override that weakens a protection gets
 * to render only through cluster.allowWeaker (validate/inventory.ts), and its reason says so.
 */
function withExtraArgs(
  m: AnyUnitModel,
  extra: Record<string, string> | undefined,
  allowWeaker: readonly string[],
): AnyUnitModel {
  if (!extra) return m;
  const weaker = (name: string) => {
    if (!allowWeaker.includes(`${m.component}.${name}`)) return '';
    const w = weakeningsOf(m.component, name, m.flags, extra);
    return w.length ? `; allowed weaker by cluster.allowWeaker: ${describeWeakenings(w)}` : '';
  };
  const flags = m.flags.map((f) => {
    const removedBy = f.list?.removedBy;
    if (!(f.name in extra) && !(removedBy !== undefined && removedBy in extra)) return f;
    const value = withExtra(f, extra);
    const from = f.list
      ? `hardwire's ${f.value}, with cluster.extraArgs: ${value || 'none'}`
      : 'value from inventory extraArgs';
    return { ...f, value, why: `${f.why} (${from})${f.name in extra ? weaker(f.name) : ''}` };
  });
  for (const [name, value] of Object.entries(extra).sort(([a], [b]) => a.localeCompare(b))) {
    if (!m.flags.some((f) => f.name === name))
      flags.push({ name, value, why: `set in the inventory (cluster.extraArgs)${weaker(name)}` });
  }
  return { ...m, flags };
}

/** Each model carries the registry's name of its component (models/types.ts cannot import that type without a loop). */
export function modelsFor(ctx: ModelContext): UnitModel[] {
  return componentsOn(ctx.host).map((c) => ({
    ...withExtraArgs(
      specOf(c).model(ctx),
      ctx.inv.cluster.extraArgs[c],
      ctx.inv.cluster.allowWeaker,
    ),
    component: c,
  }));
}

/** A model as the rest of hardwire sees it: named by the registry. */
export type UnitModel = AnyUnitModel<ComponentName>;
export type { ComponentName };
