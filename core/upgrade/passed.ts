// The flags each component's unit passes, as wire would render them for this inventory
// (components/models with the inventory's extraArgs), across every host that runs it; and the
// config-file fields the same models render (the kubelet's and kube-proxy's files).
import type { Inventory } from '../inventory/load.ts';
import { modelsFor } from '../components/models/index.ts';
import { leafKeys } from '../components/models/config-file.ts';
import type { PassedFlag } from './plan.ts';
import type { PassedField } from './fields.ts';

type Collected = Record<string, Map<string, Set<string>>>;

function add(out: Collected, component: string, name: string, value: string): void {
  const names = (out[component] ??= new Map());
  const values = names.get(name) ?? new Set<string>();
  values.add(value);
  names.set(name, values);
}

/** A value that differs per host lists the values joined with " | ". */
function joined(out: Collected): Record<string, { name: string; value: string }[]> {
  return Object.fromEntries(
    Object.entries(out).map(([c, names]) => [
      c,
      [...names].map(([name, values]) => ({ name, value: [...values].join(' | ') })),
    ]),
  );
}

/** component → flags in unit order. */
export function passedFlags(inv: Inventory): Record<string, PassedFlag[]> {
  const out: Collected = {};
  for (const host of inv.hosts) {
    for (const m of modelsFor({ inv, host }))
      for (const f of m.flags) add(out, m.component, f.name, f.value);
  }
  return joined(out);
}

/** The value at a json path of a rendered field's value (`authentication` → `.x509.clientCAFile`). */
function at(value: unknown, rest: string[]): unknown {
  return rest.reduce<unknown>(
    (v, k) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined),
    value,
  );
}

/** component → the leaf json paths its config file sets, in file order (the model's fields, which the renderer writes). */
export function passedFields(inv: Inventory): Record<string, PassedField[]> {
  const out: Collected = {};
  for (const host of inv.hosts) {
    for (const m of modelsFor({ inv, host })) {
      for (const f of (m.files ?? []).flatMap((file) => file.fields ?? [])) {
        for (const key of leafKeys(f.key, f.value))
          add(out, m.component, key, JSON.stringify(at(f.value, key.split('.').slice(1))));
      }
    }
  }
  return Object.fromEntries(
    Object.entries(joined(out)).map(([c, fields]) => [
      c,
      fields.map(({ name, value }) => ({ key: name, value })),
    ]),
  );
}
