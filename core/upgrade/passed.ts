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

/**
 * component → each name once, in the order first met, with its values across hosts joined by
 * " | ": the shape a plan starts from, whether the rows were rendered here or read on hosts (audit).
 */
export function joinPerHost(
  rows: Iterable<{ component: string; name: string; value: string }>,
): Record<string, PassedFlag[]> {
  const out: Collected = {};
  for (const r of rows) add(out, r.component, r.name, r.value);
  return joined(out);
}

/** The same rows as config-file fields (`key` for `name`). */
export function asFields(byComponent: Record<string, PassedFlag[]>): Record<string, PassedField[]> {
  return Object.fromEntries(
    Object.entries(byComponent).map(([c, rows]) => [
      c,
      rows.map(({ name, value }) => ({ key: name, value })),
    ]),
  );
}

/** component → flags in unit order. */
export function passedFlags(inv: Inventory): Record<string, PassedFlag[]> {
  return joinPerHost(
    inv.hosts.flatMap((host) =>
      modelsFor({ inv, host }).flatMap((m) =>
        m.flags.map((f) => ({ component: m.component, name: f.name, value: f.value })),
      ),
    ),
  );
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
  return asFields(
    joinPerHost(
      inv.hosts.flatMap((host) =>
        modelsFor({ inv, host }).flatMap((m) =>
          (m.files ?? [])
            .flatMap((file) => file.fields ?? [])
            .flatMap((f) =>
              leafKeys(f.key, f.value).map((key) => ({
                component: m.component,
                name: key,
                value: JSON.stringify(at(f.value, key.split('.').slice(1))),
              })),
            ),
        ),
      ),
    ),
  );
}
