// The flag-level upgrade plan (issue 24), pure: two flag maps and the flags each unit passes in,
// one row per passed flag out. Each flag is looked up in THAT binary's own flag set at each
// version (the map's `flags` list, which the analyzer built from the real cobra command), never
// by searching source files: a registration file can outlive the flag in one binary.
import type { FlagEntry, FlagMap, Registration } from '../flags/map.ts';
import { siteRef } from '../flags/map.ts';
import { planFields, type FieldRow, type FieldStatus, type PassedField } from './fields.ts';
import { unsetDefaultChanges, type DefaultChange } from './field-defaults.ts';

export type FlagStatus = 'unchanged' | 'default-changed' | 'deprecated' | 'renamed' | 'removed';

/** A status that stops the component at start: its flag set no longer has the name. */
export const BLOCKING: readonly FlagStatus[] = ['removed', 'renamed'];
/** A config key the target's type no longer has: the setting is dropped (fields.ts says how). */
export const BLOCKING_FIELD: readonly FieldStatus[] = ['removed', 'renamed'];

export interface PassedFlag {
  name: string;
  value: string;
}

export interface FlagSide {
  version: string;
  /** module@version/file:line of the registration, or null when the analyzer found none. */
  registeredAt: string | null;
  default: string;
  deprecated: boolean;
  deprecatedMessage?: string;
}

export interface PlanRow {
  flag: string;
  value: string;
  status: FlagStatus;
  from: FlagSide | null;
  /** null when the target binary has no such flag. */
  to: FlagSide | null;
  /** For `renamed`: the target's flag bound to the same Go field. */
  renamedTo?: { flag: string; registeredAt: string | null };
  note: string;
}

export interface ComponentPlan {
  component: string;
  fromVersion: string;
  toVersion: string;
  rows: PlanRow[];
  /** The config file's fields (kubelet, kube-proxy), checked in the map's config section. */
  fields: FieldRow[];
  /** Config fields the file leaves unset whose default changes (field-defaults.ts); never blocking. */
  unsetDefaults?: DefaultChange[];
}

export interface PlanInput {
  from: Record<string, FlagMap>;
  to: Record<string, FlagMap>;
  /** component → the flags its unit passes (extraArgs included). */
  passed: Record<string, PassedFlag[]>;
  /** component → the config-file fields its rendered file sets. */
  fields?: Record<string, PassedField[]>;
}

function cite(r: Registration | null): string | null {
  return r ? siteRef(r) : null;
}

function side(f: FlagEntry, version: string): FlagSide {
  return {
    version,
    registeredAt: cite(f.registeredAt),
    default: f.default,
    deprecated: f.deprecated,
    ...(f.deprecatedMessage ? { deprecatedMessage: f.deprecatedMessage } : {}),
  };
}

/**
 * A flag gone from the target whose Go field a flag new in the target binds: the data's only
 * evidence of a rename. Matched on the field's access path, which the analyzer resolves per flag.
 */
function renameOf(old: FlagEntry | undefined, from: FlagMap, to: FlagMap): FlagEntry | undefined {
  if (!old?.path) return undefined;
  const before = new Set(from.flags.map((f) => f.name));
  return to.flags.find((f) => !before.has(f.name) && f.path === old.path && f.field === old.field);
}

function row(p: PassedFlag, from: FlagMap, to: FlagMap): PlanRow {
  const a = from.flags.find((f) => f.name === p.name);
  const b = to.flags.find((f) => f.name === p.name);
  const base = {
    flag: p.name,
    value: p.value,
    from: a ? side(a, from.componentVersion) : null,
    to: b ? side(b, to.componentVersion) : null,
  };
  if (!b) {
    const renamed = renameOf(a, from, to);
    if (renamed) {
      return {
        ...base,
        status: 'renamed',
        renamedTo: { flag: renamed.name, registeredAt: cite(renamed.registeredAt) },
        note: `gone from ${to.component} ${to.componentVersion}; --${renamed.name} binds the same field (${renamed.field})`,
      };
    }
    return {
      ...base,
      status: 'removed',
      note: `${to.component} ${to.componentVersion} registers no --${p.name}: the unit would not start`,
    };
  }
  if (b.deprecated) {
    const since = a?.deprecated ? 'still deprecated' : 'newly deprecated';
    return {
      ...base,
      status: 'deprecated',
      note: `${since}${b.deprecatedMessage ? `: ${b.deprecatedMessage}` : ''}`,
    };
  }
  if (a && a.default !== b.default) {
    return {
      ...base,
      status: 'default-changed',
      note: `default ${JSON.stringify(a.default)} → ${JSON.stringify(b.default)}`,
    };
  }
  return {
    ...base,
    status: 'unchanged',
    note: a ? '' : `not registered at ${from.componentVersion}`,
  };
}

/** One plan per component that has both maps and passed flags, rows in the unit's flag order. */
export function planUpgrade(input: PlanInput): ComponentPlan[] {
  const plans: ComponentPlan[] = [];
  for (const [component, flags] of Object.entries(input.passed)) {
    const from = input.from[component];
    const to = input.to[component];
    if (!from || !to)
      throw new Error(`no flag map for ${component} at ${from ? 'the target' : 'the source'}`);
    plans.push({
      component,
      fromVersion: from.componentVersion,
      toVersion: to.componentVersion,
      rows: flags.map((f) => row(f, from, to)),
      fields: planFields(input.fields?.[component] ?? [], from, to),
      ...(from.config && to.config
        ? {
            unsetDefaults: unsetDefaultChanges(
              (input.fields?.[component] ?? []).map((f) => f.key),
              from,
              to,
            ),
          }
        : {}),
    });
  }
  return plans;
}

/** Flags and config fields that stop a component, or drop a setting, at the target. */
export function blocking(plans: ComponentPlan[]): { component: string; name: string }[] {
  return plans.flatMap((p) => [
    ...p.rows
      .filter((r) => BLOCKING.includes(r.status))
      .map((r) => ({ component: p.component, name: `--${r.flag}` })),
    ...p.fields
      .filter((r) => BLOCKING_FIELD.includes(r.status))
      .map((r) => ({ component: p.component, name: r.key })),
  ]);
}
