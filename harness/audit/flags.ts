// A process's argv and config file against the flag map of its binary at its version: each flag
// with the line that registers it and the lines that read it, or unknown. Nothing is dropped.
import {
  citationOf,
  isFlagComponent,
  loadFlagMap,
  siteRef,
  type FlagMap,
  type Site,
} from '../../core/flags/map.ts';
import { findEtcdMap } from '../../core/flags/etcd-maps.ts';
import { dataDir } from '../../core/flags/map.ts';
import { relative } from 'node:path';
import { existsSync } from 'node:fs';
import { repoRoot } from '../../lib/paths.ts';
import { configValues } from '../planes/config-values.ts';
import type { AuditFlag, AuditSite } from './types.ts';

const site = (s: Site): AuditSite => ({ ref: siteRef(s), url: s.url });

/** A binary's map built when none is committed (harness/flags/kubernetes-on-demand.ts), or why not. */
export type MapOnDemand = (
  component: string,
  version: string,
) => { map: FlagMap; file: string } | { why: string };

/** The committed map for a binary at the version it reports, else one built on demand, or why there is none. */
export function mapFor(
  component: string,
  version: string | undefined,
  onDemand?: MapOnDemand,
): { map: FlagMap; file: string } | { why: string } {
  if (!isFlagComponent(component)) return { why: `hardwire has no flag map for ${component}` };
  if (!version) return { why: `${component}'s version could not be read, so no map is chosen` };
  // A distribution's build of a release (k0s's v1.36.3+k0s) is that release's source: its map.
  version = version.replace(/\+.*$/, '');
  if (component === 'etcd') {
    const hit = findEtcdMap(version);
    if (hit) return { map: hit.map, file: hit.file };
  } else if (existsSync(`${dataDir(version)}/${component}.json`))
    return {
      map: loadFlagMap(component, version),
      file: relative(repoRoot, `${dataDir(version)}/${component}.json`),
    };
  if (onDemand) return onDemand(component, version);
  return {
    why:
      component === 'etcd'
        ? `no flag map for etcd ${version} here; "hardwire flags --regenerate --etcd ${version}" builds one from its Go modules`
        : `no flag map for ${component} ${version} here; "hardwire flags --regenerate --kubernetes-version ${version}" builds one from its Go modules`,
  };
}

/**
 * argv's flags in order, as the binary's pflag would split them: `--name=value`; `--name value`
 * unless the map says the flag is a bool; `-x` by its shorthand. Repeated flags stay separate rows.
 */
export function argvFlags(argv: string[], map?: FlagMap): { name: string; value: string }[] {
  const out: { name: string; value: string }[] = [];
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') break;
    if (!a.startsWith('-') || a === '-') continue;
    const long = a.startsWith('--');
    const body = a.replace(/^--?/, '');
    const eq = body.indexOf('=');
    let name = eq >= 0 ? body.slice(0, eq) : body;
    if (!long) name = map?.flags.find((f) => f.shorthand === name)?.name ?? name;
    const entry = map?.flags.find((f) => f.name === name);
    let value: string;
    if (eq >= 0) value = body.slice(eq + 1);
    else if (entry?.type === 'bool') value = 'true';
    else if (i + 1 < argv.length && !argv[i + 1]!.startsWith('-')) value = argv[++i]!;
    else value = 'true';
    out.push({ name, value });
  }
  return out;
}

/** Values of flags that may hold a secret are not repeated in the report. */
const SECRET = /(^|-)(token|password|secret)($|-)(?!.*file)/;
const shown = (name: string, value: string) => (SECRET.test(name) ? '(redacted)' : value);

export function mapFlags(argv: string[], m: { map: FlagMap } | { why: string }): AuditFlag[] {
  const map = 'map' in m ? m.map : undefined;
  return argvFlags(argv, map).map(({ name, value }) => {
    const base = { name, value: shown(name, value), readAt: [] as AuditSite[] };
    if (!map) return { ...base, status: 'unmapped' as const };
    const f = map.flags.find((x) => x.name === name);
    if (!f) return { ...base, status: 'unknown' as const };
    const cite = citationOf(f)?.text;
    return {
      ...base,
      status: f.consumedAt.length > 0 ? ('read' as const) : ('registered' as const),
      ...(cite ? { cite } : {}),
      ...(f.registeredAt ? { registeredAt: site(f.registeredAt) } : {}),
      readAt: f.consumedAt.map(site),
    };
  });
}

/** A config file's fields (kubelet's, kube-proxy's --config) against the map's config section. */
export function mapConfig(text: string, m: { map: FlagMap } | { why: string }): AuditFlag[] {
  const map = 'map' in m ? m.map : undefined;
  const known = new Set(map?.config?.fields.map((f) => f.key) ?? []);
  return [...configValues(text, known)].map(([key, value]) => {
    const base = { name: key, value: shown(key, value), readAt: [] as AuditSite[] };
    if (!map?.config) return { ...base, status: 'unmapped' as const };
    const f = map.config.fields.find((x) => x.key === key);
    if (!f) return { ...base, status: 'unknown' as const };
    return {
      ...base,
      status: f.consumedAt.length > 0 ? ('read' as const) : ('registered' as const),
      registeredAt: site(f.registeredAt),
      readAt: f.consumedAt.map(site),
    };
  });
}
