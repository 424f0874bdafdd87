// What the audited process does not set that hardwire's model of the same component on the same
// host (from the same inventory) sets, with hardwire's reason for each: the protections a cluster
// made another way lacks, named.
import type { Inventory } from '../../core/inventory/load.ts';
import { modelsFor, type UnitModel } from '../../core/components/models/index.ts';
import { leafKeys } from '../../core/components/models/config-file.ts';
import type { AuditLack, AuditProcess } from './types.ts';

/** hardwire's model of the component, on this host if the inventory runs it there, else on a host that does. */
function modelOf(inv: Inventory, hostName: string, component: string): UnitModel | undefined {
  const hosts = [...inv.hosts].sort(
    (a, b) => Number(b.name === hostName) - Number(a.name === hostName),
  );
  for (const host of hosts) {
    const m = modelsFor({ inv, host }).find((x) => x.component === component);
    if (m) return m;
  }
  return undefined;
}

export function lacksOf(inv: Inventory, hostName: string, p: AuditProcess): AuditLack[] {
  const m = modelOf(inv, hostName, p.component);
  if (!m) return [];
  const flags = new Set(p.flags.map((f) => f.name));
  const out: AuditLack[] = m.flags
    .filter((f) => !flags.has(f.name))
    .map((f) => ({ kind: 'flag', name: f.name, hardwire: f.value, why: f.why }));
  if (p.config) {
    // The audit reads fields at the flag map's granularity: a whole object counts for its leaves.
    const have = p.config.fields.map((f) => f.name);
    const present = (leaf: string) => have.some((k) => leaf === k || leaf.startsWith(`${k}.`));
    for (const f of (m.files ?? []).flatMap((file) => file.fields ?? []))
      for (const leaf of leafKeys(f.key, f.value))
        if (!present(leaf))
          out.push({ kind: 'field', name: leaf, hardwire: JSON.stringify(f.value), why: f.why });
  }
  return out;
}
