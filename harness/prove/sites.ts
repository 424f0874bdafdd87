// What to trace for one unit: every read site the flag map cites for each flag the unit passes,
// with the location delve knows it by and an expression that reads the value at that line.
import {
  normalizeFlagName,
  siteRef,
  type FlagEntry,
  type FlagMap,
  type ReadSite,
} from '../../core/flags/map.ts';
import { guardProbes, type GuardProbe } from './guards.ts';
import { namer, type BinaryVersions } from '../delve/modules.ts';

export interface PassedFlag {
  name: string;
  value: string;
}

export interface TraceSite {
  flag: string;
  /** Index in the flag's consumedAt (0 is the citation the rendered unit shows). */
  index: number;
  site: ReadSite;
  /** `module@version/file`: how -trimpath names the file in the binary's DWARF (the required version of a replaced module, see trace/modules.ts). */
  file: string;
  ref: string;
  /** A Go expression for the value at the line, taken from the cited excerpt; undefined for a lookup by name. */
  expr?: string;
}

export interface FlagPlan {
  flag: PassedFlag;
  entry?: FlagEntry;
  sites: TraceSite[];
}

/** `--name=value` / `--name value`-free argv of a unit (hardwire renders every flag as --name=value). */
export function passedFlags(argv: string[]): PassedFlag[] {
  return argv
    .filter((a) => a.startsWith('--'))
    .map((a) => {
      const eq = a.indexOf('=');
      return eq < 0
        ? { name: a.slice(2), value: 'true' }
        : { name: a.slice(2, eq), value: a.slice(eq + 1) };
    });
}

/**
 * The selector chain the excerpt reads, e.g. `o.Deprecated.Kubeconfig` for `.Kubeconfig`: the last
 * plain chain ending in the selector (the right-hand side of an assignment comes last), never the
 * `out.` side of a generated conversion, which is written, not read, at that line.
 */
export function valueExpr(site: ReadSite): string | undefined {
  const sel = site.selector;
  if (sel.startsWith('"')) return undefined;
  const tail = sel.startsWith('.') ? sel.slice(1) : sel;
  if (!/^\w+$/.test(tail)) return undefined;
  const re = new RegExp(`(?<![\\w.])((?:[A-Za-z_]\\w*\\.)*${tail})(?!\\w|\\()`, 'g');
  const found = [...site.excerpt.matchAll(re)]
    .map((m) => m[1]!)
    .filter((e) => !e.startsWith('out.'));
  return found.at(-1);
}

/** The probes for the guards of every site the plans trace (guards.ts). */
export function planGuards(plans: FlagPlan[], binary: BinaryVersions = new Map()): GuardProbe[] {
  return guardProbes(
    plans.flatMap((p) => p.sites.map((t) => t.site)),
    namer(binary),
  );
}

/** `binary`: modules the debug build names at another version than the one cited (harness/delve/modules.ts). */
export function planFlags(
  map: FlagMap,
  argv: string[],
  binary: BinaryVersions = new Map(),
): FlagPlan[] {
  const name = namer(binary);
  const named = (s: ReadSite) => name(s.module, s.version, s.file);
  return passedFlags(argv).map((flag) => {
    const entry = map.flags.find((f) => f.name === normalizeFlagName(flag.name));
    const sites = (entry?.consumedAt ?? []).map((site, index) => {
      const expr = valueExpr(site);
      return {
        flag: flag.name,
        index,
        site,
        file: named(site),
        ref: siteRef(site),
        ...(expr ? { expr } : {}),
      };
    });
    return { flag, ...(entry ? { entry } : {}), sites };
  });
}
