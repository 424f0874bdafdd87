// `hardwire flags verify`: re-open every cited file:line in the module source at the pinned version
// and check that the line still says what the citation claims.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runSync } from '../../lib/proc.ts';
import { repoRoot } from '../../lib/paths.ts';
import {
  mappedComponents,
  loadFlagMap,
  type ConfigFieldEntry,
  type FlagMap,
  type Registration,
  type ReadSite,
  type Site,
  defaultFlagVersion,
} from '../../core/flags/map.ts';
import { goBinary, goEnv } from './go.ts';

export interface CitationFailure {
  component: string;
  /** The flag's name, or the config field's key when `config` is set. */
  flag: string;
  config?: true;
  role: 'registration' | 'read' | 'conversion' | 'default' | 'deprecation' | 'condition';
  site: string;
  reason: string;
}

export interface VerifyResult {
  citations: number;
  /** Of `citations`, those of config fields (declaration, conversion and read sites). */
  configCitations: number;
  verified: number;
  failed: number;
  failures: CitationFailure[];
  downloaded: string[];
}

/** Module paths are case-encoded in the module cache: uppercase letters become !lowercase. */
export function escapeModule(p: string): string {
  return p.replace(/[A-Z]/g, (c) => `!${c.toLowerCase()}`);
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function lineHasSelector(line: string, selector: string): boolean {
  if (selector.startsWith('"')) return line.includes(selector);
  if (selector.startsWith('.'))
    return (
      new RegExp(`\\.\\s*${escapeRe(selector.slice(1))}\\b`).test(line) ||
      new RegExp(`^\\s*${escapeRe(selector.slice(1))}\\b`).test(line)
    );
  return new RegExp(`\\b${escapeRe(selector)}\\b`).test(line);
}

/** A default's line: SetDefaults' `obj.….Field =` assignment, or the doc's `// Default: value` line. */
function defaultLineReason(
  line: string,
  goField: string,
  d: NonNullable<ConfigFieldEntry['default']>,
): string | undefined {
  // A `Default:` with nothing after it takes its value from the next comment line.
  if (d.from === 'doc')
    return /^\s*\/\/\s*Default:/.test(line) && (line.includes(d.value) || /Default:\s*$/.test(line))
      ? undefined
      : `line is not "// Default: ${d.value}"`;
  return new RegExp(`\\.${escapeRe(goField)}\\b[\\w.]*\\s*=[^=]`).test(line)
    ? undefined
    : `line does not assign .${goField}`;
}

/** The analyzer's excerpt of a line: trimmed, and cut to 197 characters and "..." when longer. */
const excerptOf = (line: string, text: string) =>
  line.trim() === text || (text.endsWith('...') && line.trim().startsWith(text.slice(0, -3)));

/**
 * Every citation of the maps at `version` (a Kubernetes release's directory), or of `maps` when
 * given (etcd's map at one etcd version, `flags verify --etcd v3.6.16`).
 */
export function verifyFlagMaps(
  opts: {
    version?: string;
    components?: string[];
    maps?: FlagMap[];
    modcache?: string;
    download?: boolean;
  } = {},
): VerifyResult {
  const version = opts.version ?? defaultFlagVersion;
  const env = goEnv();
  const modcache = opts.modcache ?? env.GOMODCACHE ?? '';
  const files = new Map<string, string[] | null>();
  const downloaded: string[] = [];
  const triedDownload = new Set<string>();

  const lineOf = (s: Site): string | undefined => {
    const dir = join(modcache, `${escapeModule(s.module)}@${s.version}`);
    const key = `${dir}/${s.file}`;
    if (!files.has(key)) {
      const modKey = `${s.module}@${s.version}`;
      if (!existsSync(dir) && opts.download !== false && !triedDownload.has(modKey)) {
        triedDownload.add(modKey);
        runSync(goBinary(), ['mod', 'download', modKey], {
          step: 'flags verify',
          label: `go mod download ${modKey}`,
          cwd: join(repoRoot, 'harness', 'flags', 'analyzer'),
          env,
        });
        downloaded.push(modKey);
      }
      files.set(key, existsSync(key) ? readFileSync(key, 'utf8').split('\n') : null);
    }
    const lines = files.get(key);
    return lines ? lines[s.line - 1] : undefined;
  };

  const failures: CitationFailure[] = [];
  let citations = 0;
  let configCitations = 0;
  // The non-empty lines from s's, trimmed and joined by a space, until they are `length` long: a condition over several lines as the analyzer records it.
  const linesFrom = (s: Site, length: number): string => {
    const parts: string[] = [];
    for (let n = s.line; parts.join(' ').length < length; n++) {
      const l = lineOf({ ...s, line: n });
      if (l === undefined) break;
      if (l.trim()) parts.push(l.trim());
    }
    return parts.join(' ');
  };
  const check = (
    component: string,
    flag: string,
    role: CitationFailure['role'],
    s: Site,
    ok: (line: string) => string | undefined,
    config?: true,
  ) => {
    citations++;
    if (config) configCitations++;
    const line = lineOf(s);
    const where = `${s.module}@${s.version}/${s.file}:${s.line}`;
    const fail = (reason: string) =>
      failures.push({ component, flag, ...(config ? { config } : {}), role, site: where, reason });
    if (line === undefined) {
      fail('file or line not found in the module cache');
      return;
    }
    const reason = ok(line);
    if (reason) fail(reason);
  };

  const checkRegistration = (component: string, name: string, r: Registration) => {
    check(component, name, 'registration', r, (line) => {
      // The literal at the name position, or a named constant whose declaration holds it.
      const literal = r.calledFrom ? (r.nameArg ?? name) : name;
      const constOk = (l: string) =>
        r.nameConst !== undefined &&
        lineHasSelector(l, r.nameConst.ident) &&
        (lineOf(r.nameConst) ?? '').includes(JSON.stringify(literal));
      if (r.calledFrom) {
        const fn = r.call.slice(r.call.lastIndexOf('.') + 1);
        if (!line.includes(fn)) return `line does not contain the registering call ${fn}`;
        if (r.nameFormat) {
          if (!line.includes(JSON.stringify(r.nameFormat)))
            return `line does not contain the name format ${JSON.stringify(r.nameFormat)}`;
          if (r.nameFormat.replace('%s', literal) !== name)
            return `format ${r.nameFormat} with ${literal} is not ${name}`;
        }
        const from = lineOf(r.calledFrom) ?? '';
        if (!from.includes(JSON.stringify(literal)) && !constOk(from))
          return `call site ${r.calledFrom.file}:${r.calledFrom.line} does not pass ${JSON.stringify(literal)}`;
        return undefined;
      }
      // Registered with '_' (cadvisor's storage_driver_user, concurrent_rc_syncs): the binary's
      // normalizer (k8s.io/component-base/cli/flag WordSepNormalizeFunc) prints and accepts it with '-'.
      const underscored = name.replaceAll('-', '_');
      if (
        line.includes(JSON.stringify(name)) ||
        line.includes(JSON.stringify(underscored)) ||
        constOk(line)
      )
        return undefined;
      return `line does not contain ${JSON.stringify(name)}${underscored !== name ? ` or ${JSON.stringify(underscored)}` : ''}`;
    });
  };

  for (const map of opts.maps ??
    (opts.components ?? mappedComponents(version)).map((c) => loadFlagMap(c, version))) {
    const component = map.component;
    for (const f of map.flags) {
      if (f.registeredAt) checkRegistration(component, f.name, f.registeredAt);
      for (const r of f.alsoRegisteredAt ?? []) checkRegistration(component, f.name, r);
      for (const r of f.consumedAt as ReadSite[]) {
        check(component, f.name, 'read', r, (line) =>
          lineHasSelector(line, r.selector) ? undefined : `line does not contain ${r.selector}`,
        );
        // A conditional read's condition: the lines from the one the map names hold the condition's text.
        const c = r.condition && /^(.+?)@(v[^/]+)\/(.+):(\d+)$/.exec(r.condition.at);
        if (r.condition && !c)
          check(
            component,
            f.name,
            'condition',
            r,
            () => `unparsable condition site ${r.condition!.at}`,
          );
        else if (c) {
          const at = { module: c[1]!, version: c[2]!, file: c[3]!, line: Number(c[4]) } as Site;
          const missing = Object.keys(r.condition!.tests ?? {}).filter(
            (operand) => !r.condition!.text.includes(operand),
          );
          check(component, f.name, 'condition', at, () =>
            !excerptOf(linesFrom(at, r.condition!.text.length), r.condition!.text)
              ? `lines are not the condition ${r.condition!.text}`
              : missing.length
                ? `the condition's text lacks its operands ${missing.join(', ')}`
                : undefined,
          );
        }
      }
    }
    // Config fields: the versioned type's field line with its json tag, the conversion that moves
    // the value (if any), and the reads, as for flags.
    for (const f of map.config?.fields ?? []) {
      const tag = f.key.slice(f.key.lastIndexOf('.') + 1);
      check(
        component,
        f.key,
        'registration',
        f.registeredAt,
        (line) =>
          lineHasSelector(line, f.goField) &&
          (line.includes(`json:"${tag}"`) || line.includes(`json:"${tag},`))
            ? undefined
            : `line does not declare ${f.goField} with json:"${tag}"`,
        true,
      );
      if (f.convertedAt) {
        const into = f.path.slice(f.path.lastIndexOf('.') + 1);
        check(
          component,
          f.key,
          'conversion',
          f.convertedAt,
          (line) =>
            lineHasSelector(line, `.${into}`) ? undefined : `line does not assign .${into}`,
          true,
        );
      }
      for (const r of f.consumedAt) {
        check(
          component,
          f.key,
          'read',
          r,
          (line) =>
            lineHasSelector(line, r.selector) ? undefined : `line does not contain ${r.selector}`,
          true,
        );
      }
      if (f.default)
        check(
          component,
          f.key,
          'default',
          f.default.at,
          (line) => defaultLineReason(line, f.goField, f.default!),
          true,
        );
      if (f.deprecated)
        check(
          component,
          f.key,
          'deprecation',
          f.deprecated.at,
          (line) =>
            /^\s*\/\/\s*Deprecated:/.test(line)
              ? undefined
              : 'line is not a "// Deprecated:" comment',
          true,
        );
    }
  }
  return {
    citations,
    configCitations,
    verified: citations - failures.length,
    failed: failures.length,
    failures,
    downloaded,
  };
}
