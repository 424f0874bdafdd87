// Feature gates the units pass (--feature-gates, extraArgs included), checked in the gate spec
// tables each binary registers at both versions (flags/data/<v>/feature-gates.json). The spec in
// force is the last one whose Version is at or below the binary's own minor (its emulated version).
import {
  tableKey,
  type GateData,
  type GateEntry,
  type GateSpec,
  type GateTable,
} from './gate-data.ts';
import type { PassedFlag } from './plan.ts';

export type GateStatus = 'unchanged' | 'default-changed' | 'locked' | 'removed' | 'unknown';

export interface GateSide {
  /** The emulated version the spec was picked for ("1.37"; "" for etcd's unversioned gates). */
  emulated: string;
  default: boolean | null;
  preRelease: string;
  lockToDefault: boolean;
  /** module@version/file:line of the spec in force (the gate's key line when it has no spec). */
  at: string;
}

export interface GateRow {
  gate: string;
  /** The values the units set, per host, deduplicated. */
  values: boolean[];
  status: GateStatus;
  blocking: boolean;
  from: GateSide | null;
  to: GateSide | null;
  /** For a removed gate: the tables at the target that no longer list it. */
  searched?: string[];
  note: string;
}

/** etcd's are one per hop: `fromVersion` and `toVersion` name the hop's etcd versions, as its flag table's do. */
export interface GatePlan {
  component: string;
  rows: GateRow[];
  fromVersion?: string;
  toVersion?: string;
}

/** "A=true,B=false" per host value (passed.ts joins per-host values with " | "). */
export function parseGates(value: string): Map<string, boolean[]> {
  const out = new Map<string, boolean[]>();
  for (const host of value.split(' | ')) {
    for (const pair of host.split(',')) {
      const [name, v] = pair.split('=').map((s) => s.trim());
      if (!name) continue;
      const set = out.get(name) ?? [];
      const b = v?.toLowerCase() === 'true';
      if (!set.includes(b)) set.push(b);
      out.set(name, set);
    }
  }
  return out;
}

function minorOf(version: string): string {
  return /^v?(\d+\.\d+)/.exec(version)?.[1] ?? '';
}

function newer(a: string, b: string): boolean {
  const [am = 0, an = 0] = a.split('.').map(Number);
  const [bm = 0, bn = 0] = b.split('.').map(Number);
  return am > bm || (am === bm && an > bn);
}

const ref = (t: GateTable, line: number): string => `${t.module}@${t.version}/${t.file}:${line}`;

/** The gate's entry in the component's tables: one with specs wins over a bare key (`kcmfeatures.X: {}`). */
function lookup(
  data: GateData,
  component: string,
  gate: string,
): { table: GateTable; entry: GateEntry } | null {
  const keys = data.components[component] ?? [];
  let bare: { table: GateTable; entry: GateEntry } | null = null;
  for (const t of data.tables.filter((x) => keys.includes(tableKey(x)))) {
    const entry = t.gates.find((g) => g.name === gate);
    if (entry?.specs.length) return { table: t, entry };
    if (entry && !bare) bare = { table: t, entry };
  }
  return bare;
}

function sideAt(
  data: GateData,
  component: string,
  gate: string,
  componentVersion: string,
): GateSide | null {
  const hit = lookup(data, component, gate);
  if (!hit) return null;
  const emulated = component === 'etcd' ? '' : minorOf(componentVersion);
  let spec: GateSpec | undefined;
  for (const s of hit.entry.specs) if (!s.version || !newer(s.version, emulated)) spec = s;
  if (!spec)
    return {
      emulated,
      default: null,
      preRelease: '',
      lockToDefault: false,
      at: ref(hit.table, hit.entry.line),
    };
  return {
    emulated,
    default: spec.default,
    preRelease: spec.preRelease,
    lockToDefault: spec.lockToDefault,
    at: ref(hit.table, spec.line),
  };
}

function row(
  gate: string,
  values: boolean[],
  from: GateSide | null,
  to: GateSide | null,
  searched: string[],
  toVersion: string,
): GateRow {
  const base = { gate, values, from, to };
  if (!to && !from)
    return { ...base, status: 'unknown', blocking: true, note: 'not registered at either version' };
  if (!to)
    return {
      ...base,
      status: 'removed',
      blocking: true,
      searched,
      note: `${toVersion} registers no ${gate}: the component would refuse --feature-gates and not start`,
    };
  if (to.lockToDefault) {
    const off = values.filter((v) => v !== to.default);
    if (off.length)
      return {
        ...base,
        status: 'locked',
        blocking: true,
        note: `locked to ${to.default} at ${to.emulated || toVersion}; setting ${gate}=${off[0]} is refused at start`,
      };
    return {
      ...base,
      status: 'locked',
      blocking: false,
      note: `locked to ${to.default} at ${to.emulated || toVersion} (${to.preRelease}); the setting is a no-op, drop it before the gate is removed`,
    };
  }
  if (from && from.default !== to.default)
    return {
      ...base,
      status: 'default-changed',
      blocking: false,
      note: `default ${from.default} → ${to.default} (${from.preRelease} → ${to.preRelease})`,
    };
  return { ...base, status: 'unchanged', blocking: false, note: '' };
}

export interface GateInput {
  from: GateData;
  to: GateData;
  passed: Record<string, PassedFlag[]>;
  /** component → [version at the source, version at the target] (etcd: etcd's own). */
  versions: Record<string, [string, string]>;
}

/** One plan per component whose unit passes --feature-gates. */
export function planGates(input: GateInput): GatePlan[] {
  const plans: GatePlan[] = [];
  for (const [component, flags] of Object.entries(input.passed)) {
    const fg = flags.find((f) => f.name === 'feature-gates');
    const versions = input.versions[component];
    if (!fg || !versions) continue;
    const [fromV, toV] = versions;
    const searched = input.to.tables
      .filter((t) => (input.to.components[component] ?? []).includes(tableKey(t)))
      .map((t) => `${t.module}@${t.version}/${t.file}`);
    const rows = [...parseGates(fg.value)].map(([gate, values]) =>
      row(
        gate,
        values,
        sideAt(input.from, component, gate, fromV),
        sideAt(input.to, component, gate, toV),
        searched,
        toV,
      ),
    );
    plans.push({ component, rows });
  }
  return plans;
}
