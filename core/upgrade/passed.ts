// The flags each component's unit passes, as wire would render them for this inventory
// (components/models with the inventory's extraArgs), across every host that runs it.
import type { Inventory } from '../inventory/load.ts';
import { modelsFor } from '../components/models/index.ts';
import type { PassedFlag } from './plan.ts';

/** component → flags in unit order; a flag whose value differs per host lists the values joined. */
export function passedFlags(inv: Inventory): Record<string, PassedFlag[]> {
  const out: Record<string, Map<string, Set<string>>> = {};
  for (const host of inv.hosts) {
    for (const m of modelsFor({ inv, host })) {
      const flags = (out[m.component] ??= new Map());
      for (const f of m.flags) {
        const values = flags.get(f.name) ?? new Set<string>();
        values.add(f.value);
        flags.set(f.name, values);
      }
    }
  }
  return Object.fromEntries(Object.entries(out).map(([c, flags]) => [c, [...flags].map(([name, values]) => ({ name, value: [...values].join(' | ') }))]));
}
