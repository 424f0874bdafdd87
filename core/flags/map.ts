// The flag map (issue 6): committed JSON produced by flags/analyzer from the pinned source.
// Reading it needs no Go; `hardwire flags --regenerate` rebuilds it.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../../lib/errors.ts';
import { repoRoot } from '../../lib/paths.ts';
import { PINNED_KUBERNETES } from '../../lib/constants.ts';

/** Every component with a flagTarget in its spec has a flag map (flags/data/<version>/<component>.json). */
import { FLAG_MAP_NAMES, type ComponentName } from '../components/registry/index.ts';
export const flagComponents = FLAG_MAP_NAMES;
export type FlagComponent = ComponentName;
export const defaultFlagVersion = PINNED_KUBERNETES;

export interface Site {
  module: string;
  version: string;
  /** Relative to the module root. */
  file: string;
  line: number;
  col: number;
  url: string;
  package: string;
  function?: string;
  excerpt: string;
}

export interface Registration extends Site {
  /** The pflag/flag function, e.g. github.com/spf13/pflag.(*pflag.FlagSet).StringSliceVar */
  call: string;
  /** Helper that forwards the name to `call`, when the name is passed in from elsewhere. */
  via?: string;
  calledFrom?: Site;
  nameArg?: string;
  nameFormat?: string;
  nameConst?: Site & { ident: string };
}

export type ReadKind =
  | 'consumer'
  | 'app'
  | 'apply'
  | 'options'
  | 'log'
  | 'lookup'
  | 'validation'
  | 'generated';

export interface ReadSite extends Site {
  /** What the cited line contains: ".Field", a variable name, or a "flag-name" literal (lookup by name). */
  selector: string;
  kind: ReadKind;
  /** How many trailing fields of the bound path the selector at this site spells out. */
  match: number;
  /** Set when this is not a direct read of the bound field: a copy, the containing struct, shared code, a lookup. */
  via?: string;
  /** For a read through copies of the value: how many copies away from the bound field (1..3). */
  hop?: number;
  /** The read only copies the value into this field or variable. */
  copyTo?: string;
  /** The read runs only when another flag is set (the analyzer's cond.go). */
  condition?: ReadCondition;
  /** Every branch the read needs in its own function, innermost first, on anything (the analyzer's guards.go): prove evaluates each live. */
  guards?: ReadGuard[];
}

/** One branch around a read: `at` its condition's first line (`module@version/file:line`); `expr` the Go expression the read needs true (false when `negated`). */
export interface ReadGuard {
  at: string;
  text: string;
  expr: string;
  negated?: true;
}

/**
 * What a conditional read needs: one of `flags` set to a non-default value, tested at `at`
 * (`module@version/file:line`; `text`: the condition's every line, joined). `caller`: the read's
 * function runs only from a call in that branch, in this function. `expr`: the Go expression the
 * read needs true (false when `negated`: past its early return, in its else, right of its `||`);
 * `tests`: each operand of it read from a flag's field, with that flag. No `expr` when the read's
 * function has callers under different conditions. harness/prove/decide.ts decides it on a unit's flags.
 */
export interface ReadCondition {
  flags: string[];
  at: string;
  text: string;
  caller?: string;
  expr?: string;
  negated?: true;
  tests?: Record<string, string[]>;
}

export type ReadBy = 'read' | 'validation-only' | 'copy-only' | 'none';

export interface FlagEntry {
  name: string;
  shorthand?: string;
  type: string;
  default: string;
  defaultNote?: string;
  help: string;
  deprecated: boolean;
  deprecatedMessage?: string;
  hidden: boolean;
  /** Qualified selector of the bound field, e.g. storagebackend.TransportConfig.ServerList. */
  field: string;
  /** Full access path from the registering options type. */
  path: string;
  binding: 'field' | 'variable' | 'value' | 'lookup' | 'none';
  registeredAt: Registration | null;
  alsoRegisteredAt?: Registration[];
  readBy: ReadBy;
  /** All read sites found (one per line); consumedAt holds the first few, best first. */
  consumedTotal: number;
  consumedAt: ReadSite[];
  sharedReadsTotal?: number;
}

export interface Coverage {
  flags: number;
  registered: number;
  withRead: number;
  validationOnly: number;
  copyOnly: number;
  neverRead: number;
  unregistered: number;
}

/** One field of a component's config file (analyzer/config.go): its declaration and where its value is read. */
export interface ConfigFieldEntry {
  /** The json path in the file: `authentication.x509.clientCAFile`. */
  key: string;
  /** The versioned type's Go field, on the registration line. */
  goField: string;
  type: string;
  /** The internal type's field the converted value lands in (empty when there is none). */
  field: string;
  path: string;
  /** The versioned type's json-tagged field line. */
  registeredAt: Site;
  /** A hand-written conversion that copies the value into an internal field of another name. */
  convertedAt?: Site;
  /** A flag bound to the same internal field. */
  flag?: string;
  readBy: ReadBy;
  consumedTotal: number;
  consumedAt: ReadSite[];
  sharedReadsTotal?: number;
  /** Why no read is cited first, when it is not read outside validation and generated code. */
  reason?: string;
  /** Its value when the file leaves it out: SetDefaults_<Type>'s assignment, else the doc's `Default:` line. */
  default?: {
    value: string;
    from: 'defaults' | 'doc';
    expr?: string;
    assignments?: number;
    at: Site;
  };
  /** Its doc comment's `Deprecated:` text, cited at that line. */
  deprecated?: { message: string; at: Site };
}

export interface ConfigCoverage {
  fields: number;
  withRead: number;
  validationOnly: number;
  copyOnly: number;
  neverRead: number;
  noInternal: number;
}

export interface ConfigSection {
  /** The versioned type the file is written in, and the internal type it is converted to (pkgpath.Type). */
  type: string;
  internalType: string;
  coverage: ConfigCoverage;
  fields: ConfigFieldEntry[];
}

export interface FlagMap {
  component: FlagComponent;
  /** The Kubernetes release the map was built for; absent from an etcd-only map (data/etcd/<version>.json). */
  kubernetesVersion?: string;
  /** The component's own version: the Kubernetes version, or etcd's for etcd. */
  componentVersion: string;
  root: string;
  method: string;
  coverage: Coverage;
  flags: FlagEntry[];
  gaps: string[];
  /** The config file's fields, for the kubelet and kube-proxy. */
  config?: ConfigSection;
}

export function dataDir(version: string): string {
  return join(repoRoot, 'core', 'flags', 'data', version);
}

export function flagVersions(): string[] {
  const dir = join(repoRoot, 'core', 'flags', 'data');
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((d) => /^v\d+\.\d+\.\d+$/.test(d))
        .sort()
    : [];
}

/**
 * The components with a map at `version`. At the pinned version that is every flag target of the
 * registry (flags.test checks it); an upgrade target may cover fewer (analyzerPins in
 * regenerate.ts says which build lists each version has).
 */
export function mappedComponents(version: string = defaultFlagVersion): FlagComponent[] {
  return flagComponents.filter((c) => existsSync(join(dataDir(version), `${c}.json`)));
}

export function isFlagComponent(c: string): c is FlagComponent {
  return (flagComponents as readonly string[]).includes(c);
}

const cache = new Map<string, FlagMap>();

/** The committed map for one component at one Kubernetes version. */
export function loadFlagMap(component: string, version: string = defaultFlagVersion): FlagMap {
  if (!isFlagComponent(component)) {
    throw new InputError(
      'component',
      `"${component}" has no flag map; expected one of ${flagComponents.join(', ')}`,
    );
  }
  const key = `${version}/${component}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const file = join(dataDir(version), `${component}.json`);
  if (!existsSync(file)) {
    const have = flagVersions();
    throw new InputError(
      'version',
      `no flag map for Kubernetes ${version} (have: ${have.join(', ') || 'none'}); run "hardwire flags --regenerate"`,
    );
  }
  const map = JSON.parse(readFileSync(file, 'utf8')) as FlagMap;
  cache.set(key, map);
  return map;
}

export function normalizeFlagName(name: string): string {
  return name.replace(/^-+/, '').split('=')[0] ?? '';
}

export function findFlag(
  component: string,
  flagName: string,
  version: string = defaultFlagVersion,
): FlagEntry | undefined {
  const name = normalizeFlagName(flagName);
  return loadFlagMap(component, version).flags.find((f) => f.name === name);
}

/** `k8s.io/apiserver@v0.36.3/pkg/storage/storagebackend/factory/etcd3.go:353` */
export function siteRef(s: Site): string {
  return `${s.module}@${s.version}/${s.file}:${s.line}`;
}

export interface Citation {
  /** `read at <module>@<version>/<file>:<line>`, or `registered at …` when no read site was found. */
  text: string;
  kind: 'read' | 'registration';
  site: Site;
  url: string;
}

function copiesAway(hop: number): string {
  return `${hop} cop${hop === 1 ? 'y' : 'ies'} away`;
}

/**
 * The one site that explains a flag best, for the comment the renderer puts above each flag:
 * `# --etcd-servers: read at k8s.io/apiserver@v0.36.3/pkg/storage/storagebackend/factory/etcd3.go:237`.
 * The first read site of the (already ranked) map; the registration when nothing reads the flag;
 * undefined when the component has no such flag.
 */
export function bestCitation(
  component: string,
  flagName: string,
  version: string = defaultFlagVersion,
): Citation | undefined {
  const f = findFlag(component, flagName, version);
  return f ? citationOf(f) : undefined;
}

/** bestCitation of one entry of a map already loaded (audit's, at the version a binary reports). */
export function citationOf(f: FlagEntry): Citation | undefined {
  const read = f.consumedAt[0];
  if (read) {
    const acting = f.consumedAt.filter((r) => r.kind !== 'validation' && r.kind !== 'generated');
    if (acting.length > 0 && acting.every((r) => r.copyTo)) {
      // kube-controller-manager --cluster-name: copied into config that nothing in this binary reads.
      return {
        text: `only copied, at ${siteRef(read)} (no read of the copy found)`,
        kind: 'read',
        site: read,
        url: read.url,
      };
    }
    const hops = read.hop ? ` (${copiesAway(read.hop)})` : '';
    const whole = read.via?.startsWith('the containing ')
      ? ` (${read.via.replace(/, read as a whole$/, '')}, read as a whole)`
      : '';
    return {
      text: `read at ${siteRef(read)}${hops}${whole}`,
      kind: 'read',
      site: read,
      url: read.url,
    };
  }
  if (f.registeredAt) {
    return {
      text: `registered at ${siteRef(f.registeredAt)} (no read site found)`,
      kind: 'registration',
      site: f.registeredAt,
      url: f.registeredAt.url,
    };
  }
  return undefined;
}

export function findConfigField(
  component: string,
  key: string,
  version: string = defaultFlagVersion,
): ConfigFieldEntry | undefined {
  return loadFlagMap(component, version).config?.fields.find((f) => f.key === key);
}

/**
 * The comment the renderer puts under a config field's reason: where the file's field is declared
 * and the read that explains it best (the map's first), e.g.
 * `declared at k8s.io/kubelet@v0.36.3/config/v1beta1/types.go:164, read at k8s.io/kubernetes@v1.36.3/pkg/kubelet/server/server.go:190`.
 */
export function configCitation(
  component: string,
  key: string,
  version: string = defaultFlagVersion,
): string | undefined {
  const f = findConfigField(component, key, version);
  if (!f) return undefined;
  const declared = `declared at ${siteRef(f.registeredAt)}`;
  const converted = f.convertedAt ? `, converted at ${siteRef(f.convertedAt)}` : '';
  const read = f.consumedAt[0];
  if (!read) return `${declared}${converted} (${f.reason ?? 'no read site found'})`;
  const only = f.readBy === 'validation-only' ? ' (by validation only)' : '';
  const hops = read.hop ? ` (${copiesAway(read.hop)})` : '';
  return `${declared}${converted}, read at ${siteRef(read)}${hops}${only}`;
}

export interface Explanation {
  component: FlagComponent;
  version: string;
  flag: FlagEntry;
  lines: string[];
}

/** A short trace: registered here, bound to this field, read here, here and here. */
export function explain(
  component: string,
  flagName: string,
  version: string = defaultFlagVersion,
  maxReads = 5,
): Explanation {
  const map = loadFlagMap(component, version);
  const f = findFlag(component, flagName, version);
  if (!f) {
    throw new InputError(
      'flag',
      `${component} ${version} has no flag --${normalizeFlagName(flagName)} (see "hardwire flags ${component}")`,
    );
  }
  const lines: string[] = [];
  const status = [
    f.deprecated ? `deprecated: ${f.deprecatedMessage ?? ''}`.trim() : '',
    f.hidden ? 'hidden' : '',
  ]
    .filter(Boolean)
    .join('; ');
  lines.push(
    `--${f.name} (${f.type}, default ${JSON.stringify(f.default)})${status ? ` [${status}]` : ''}`,
  );
  if (f.help) lines.push(`  ${f.help.split('\n')[0]}`);
  if (f.registeredAt) {
    const r = f.registeredAt;
    lines.push(`registered at ${siteRef(r)}${r.function ? ` in ${r.function}` : ''}`);
    lines.push(`    ${r.excerpt}`);
    if (r.calledFrom)
      lines.push(`  name passed from ${siteRef(r.calledFrom)}: ${r.calledFrom.excerpt}`);
  } else {
    lines.push('registration: not found in source (see gaps)');
  }
  if (f.field)
    lines.push(`bound to ${f.field}${f.path && f.path !== f.field ? `  (path ${f.path})` : ''}`);
  else lines.push(`bound to: no field or variable (${f.binding})`);
  if (f.consumedAt.length === 0) {
    lines.push('read: nowhere in the loaded code');
  } else {
    const label = f.readBy === 'read' ? 'read' : `read (${f.readBy})`;
    lines.push(
      `${label} at ${f.consumedTotal} site${f.consumedTotal === 1 ? '' : 's'}; first ${Math.min(maxReads, f.consumedAt.length)}:`,
    );
    for (const r of f.consumedAt.slice(0, maxReads)) {
      const via = r.via ? ` via ${r.via}${r.hop ? ` (${copiesAway(r.hop)})` : ''}` : '';
      lines.push(
        `  ${siteRef(r)}${r.function ? ` in ${r.function}` : ''} [${r.kind}]${via}${r.copyTo ? `, copies it to ${r.copyTo}` : ''}`,
      );
      lines.push(`      ${r.excerpt}`);
    }
  }
  return { component: map.component, version, flag: f, lines };
}
