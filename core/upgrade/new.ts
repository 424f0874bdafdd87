// "New and recommended" (issue 24): the flags and config fields a component's binary has at the
// target and not at the source, for each component the inventory runs. Never blocking: nothing the
// units pass changes. A new flag is `recommended` only where the source itself says to use it:
// another flag of the same binary is deprecated, at either tag, with a message that names it as
// `--<new flag>` (pflag's MarkDeprecated text, which the map keeps as deprecatedMessage), e.g.
// kube-proxy's `fs.MarkDeprecated("healthz-port", "… Please use --healthz-bind-address instead.")`
// (k8s.io/kubernetes@v1.36.3/cmd/kube-proxy/app/options.go:175). Help text and release notes are
// not read, and the map records no deprecation for config fields, so no new field is recommended.
import type { FlagEntry, FlagMap } from '../flags/map.ts';
import { siteRef } from '../flags/map.ts';
import type { PassedFlag } from './plan.ts';

export interface Recommendation {
  /** The deprecated flag whose message names the new one, at the version that deprecates it. */
  replaces: string;
  version: string;
  message: string;
  /** Where that flag is registered at that version (the map keeps no site for the MarkDeprecated call). */
  registeredAt: string | null;
  /** The unit passes the deprecated flag today. */
  passed: boolean;
}

export interface NewRow {
  kind: 'flag' | 'config field';
  /** The flag without dashes, or the config field's json path. */
  name: string;
  registeredAt: string | null;
  hidden: boolean;
  recommended: Recommendation | null;
  help: string;
}

export interface NewGroup {
  component: string;
  toVersion: string;
  rows: NewRow[];
}

/** The message names `--name` as a whole flag name (not a prefix of a longer one). */
function names(message: string, name: string): boolean {
  const esc = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^\\w-])--${esc}(?![\\w-])`).test(message);
}

function recommendation(
  name: string,
  from: FlagMap,
  to: FlagMap,
  passed: PassedFlag[],
): Recommendation | null {
  for (const m of [from, to]) {
    const dep = m.flags.find(
      (f: FlagEntry) => f.deprecated && f.deprecatedMessage && names(f.deprecatedMessage, name),
    );
    if (dep) {
      return {
        replaces: dep.name,
        version: m.componentVersion,
        message: dep.deprecatedMessage!,
        registeredAt: dep.registeredAt ? siteRef(dep.registeredAt) : null,
        passed: passed.some((p) => p.name === dep.name),
      };
    }
  }
  return null;
}

function firstLine(s: string): string {
  return s.split('\n')[0] ?? '';
}

/** One group per component with anything new, in the order given. */
export function newAtTarget(
  from: Record<string, FlagMap>,
  to: Record<string, FlagMap>,
  passed: Record<string, PassedFlag[]>,
): NewGroup[] {
  const groups: NewGroup[] = [];
  for (const [component, b] of Object.entries(to)) {
    const a = from[component];
    if (!a) continue;
    const had = new Set(a.flags.map((f) => f.name));
    const flags: NewRow[] = b.flags
      .filter((f) => !had.has(f.name))
      .map((f) => ({
        kind: 'flag',
        name: f.name,
        registeredAt: f.registeredAt ? siteRef(f.registeredAt) : null,
        hidden: f.hidden,
        recommended: recommendation(f.name, a, b, passed[component] ?? []),
        help: firstLine(f.help),
      }));
    const keys = new Set((a.config?.fields ?? []).map((f) => f.key));
    const fields: NewRow[] = (b.config?.fields ?? [])
      .filter((f) => !keys.has(f.key))
      .map((f) => ({
        kind: 'config field',
        name: f.key,
        registeredAt: siteRef(f.registeredAt),
        hidden: false,
        recommended: null,
        help: '',
      }));
    if (flags.length + fields.length > 0)
      groups.push({ component, toVersion: b.componentVersion, rows: [...flags, ...fields] });
  }
  return groups;
}
