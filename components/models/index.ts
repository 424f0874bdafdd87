// The unit models a host gets: each component's model (from the registry), in start order, with
// the inventory's extraArgs applied.
import { componentsOn, specOf } from '../registry/index.ts';
import type { ModelContext, UnitModel } from './types.ts';

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
  return componentsOn(ctx.host).map((c) => withExtraArgs(specOf(c).model(ctx), ctx.inv.cluster.extraArgs[c]));
}

export type { ComponentName, UnitModel, Flag } from './types.ts';
