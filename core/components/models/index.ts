// The unit models a host gets: each component's model (from the registry), in start order, with
// the inventory's extraArgs applied.
import { componentsOn, specOf, type ComponentName } from '../registry/index.ts';
import type { ModelContext, UnitModel as AnyUnitModel } from './types.ts';

/** The inventory's extraArgs override a model flag's value, or add a flag after the model's. */
function withExtraArgs(m: AnyUnitModel, extra: Record<string, string> | undefined): AnyUnitModel {
  if (!extra) return m;
  const flags = m.flags.map((f) =>
    f.name in extra
      ? { ...f, value: extra[f.name]!, why: `${f.why} (value from inventory extraArgs)` }
      : f,
  );
  for (const [name, value] of Object.entries(extra).sort(([a], [b]) => a.localeCompare(b))) {
    if (!m.flags.some((f) => f.name === name))
      flags.push({ name, value, why: 'set in the inventory (cluster.extraArgs)' });
  }
  return { ...m, flags };
}

/** Each model carries the registry's name of its component (models/types.ts cannot import that type without a loop). */
export function modelsFor(ctx: ModelContext): UnitModel[] {
  return componentsOn(ctx.host).map((c) => ({
    ...withExtraArgs(specOf(c).model(ctx), ctx.inv.cluster.extraArgs[c]),
    component: c,
  }));
}

/** A model as the rest of hardwire sees it: named by the registry. */
export type UnitModel = AnyUnitModel<ComponentName>;
export type { ComponentName };
