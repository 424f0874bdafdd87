// The analyzer's config-field defaults and deprecations (issue 24), in the committed kubelet and
// kube-proxy maps at both tags. Every claim is checked against the source in the Go module cache,
// read here with plain text scanning, not through the analyzer: the SetDefaults_<Type> function
// of the versioned defaults.go, and the doc comment directly above each field's declaration.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ConfigFieldEntry, FlagMap } from '../core/flags/map.ts';
import { repoRoot } from '../lib/paths.ts';
import { moduleDir, reopen, reopenSite } from './helpers/modcache.ts';

/** Where each component's versioned defaults live, and the type they default: known, not taken from the data. */
const DEFAULTS = {
  kubelet: { file: 'pkg/kubelet/apis/config/v1beta1/defaults.go', type: 'KubeletConfiguration' },
  'kube-proxy': {
    file: 'pkg/proxy/apis/config/v1alpha1/defaults.go',
    type: 'KubeProxyConfiguration',
  },
} as const;
const VERSIONS = ['v1.36.3', 'v1.37.2'] as const;

function fields(version: string, component: string): ConfigFieldEntry[] {
  return (
    JSON.parse(
      readFileSync(join(repoRoot, 'core', 'flags', 'data', version, `${component}.json`), 'utf8'),
    ) as FlagMap
  ).config!.fields;
}

function fileLines(module: string, version: string, file: string): string[] {
  return readFileSync(join(moduleDir(module, version), file), 'utf8').split('\n');
}

/** `obj.A.B = …` lines of SetDefaults_<type>, first per path, 1-based: the body read as text. */
function assignments(lines: string[], type: string): Map<string, { line: number; rhs: string }> {
  const start = lines.findIndex((l) => l.startsWith(`func SetDefaults_${type}(obj `));
  expect(start, `func SetDefaults_${type}`).toBeGreaterThan(0);
  const out = new Map<string, { line: number; rhs: string }>();
  for (let i = start + 1; i < lines.length && lines[i] !== '}'; i++) {
    const m = /^\s*obj\.([\w.]+)\s*=\s*([^=].*)$/.exec(lines[i]!);
    if (m && !out.has(m[1]!))
      out.set(m[1]!, { line: i + 1, rhs: m[2]!.replace(/\s*\/\/.*$/, '').trim() });
  }
  return out;
}

/** The comment lines directly above a declaration line (1-based numbers). */
function docAbove(lines: string[], decl: number): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  for (let n = decl - 1; n >= 1 && /^\s*\/\//.test(lines[n - 1]!); n--)
    out.unshift({ line: n, text: lines[n - 1]!.trim() });
  return out;
}

/** A `// Default:` line's value: its own text, or when it has none, the indented lines below it (`//   memory.available: "100Mi"`) joined with ", ". */
function docDefault(doc: { line: number; text: string }[], at: number): string {
  const own = doc[at]!.text.replace(/^\/\/\s*Default:\s*/, '');
  if (own !== '') return own;
  const block: string[] = [];
  for (const c of doc.slice(at + 1)) {
    if (!/^\/\/\s{2,}\S/.test(c.text)) break;
    block.push(c.text.replace(/^\/\/\s*/, '').trim());
  }
  return block.join(', ');
}

/** The Go field path of each key (Authentication.Anonymous.Enabled), from the keys' own goFields. */
function goPaths(fs: ConfigFieldEntry[]): Map<string, ConfigFieldEntry> {
  const byKey = new Map(fs.map((f) => [f.key, f]));
  const path = (key: string): string => {
    const dot = key.lastIndexOf('.');
    const own = byKey.get(key)!.goField;
    return dot < 0 ? own : `${path(key.slice(0, dot))}.${own}`;
  };
  return new Map(fs.map((f) => [path(f.key), f]));
}

/** The value a plain literal right-hand side spells: "x", 14, true, ptr.To(true), ptr.To[int32](5); else undefined. */
function literal(rhs: string): string | undefined {
  const inner = /^ptr\.To(?:\[\w+\])?\((.*)\)$/.exec(rhs)?.[1] ?? rhs;
  return /^("[^"]*"|-?\d+|true|false)$/.test(inner) ? inner : undefined;
}

describe('config defaults from SetDefaults_<Type>, re-read in the module cache', () => {
  for (const version of VERSIONS) {
    for (const [component, d] of Object.entries(DEFAULTS)) {
      it(`${component} ${version}: each field SetDefaults assigns cites that assignment, and no other field claims one`, () => {
        const fs = fields(version, component);
        const lines = fileLines('k8s.io/kubernetes', version, d.file);
        const byPath = goPaths(fs);
        const expected = new Map<string, { line: number; rhs: string }>();
        for (const [path, a] of assignments(lines, d.type)) {
          // obj.ConfigSyncPeriod.Duration sets configSyncPeriod: a trailing value wrapper's field.
          const f = byPath.get(path) ?? byPath.get(path.slice(0, path.lastIndexOf('.')));
          expect(
            f,
            `${component} ${version}: obj.${path} at ${d.file}:${a.line} maps to no key`,
          ).toBeDefined();
          if (!expected.has(f!.key)) expected.set(f!.key, a);
        }
        expect(expected.size).toBeGreaterThan(component === 'kubelet' ? 60 : 15);
        for (const f of fs) {
          const a = expected.get(f.key);
          if (!a) {
            expect(f.default?.from, `${component} ${version} ${f.key}`).not.toBe('defaults');
            continue;
          }
          expect(f.default, `${component} ${version} ${f.key}`).toMatchObject({
            from: 'defaults',
            at: { module: 'k8s.io/kubernetes', version, file: d.file, line: a.line },
          });
          expect(reopenSite(f.default!.at)).toContain(`.${f.goField}`);
          const lit = literal(a.rhs);
          if (lit !== undefined)
            expect(f.default!.value, `${component} ${version} ${f.key} = ${a.rhs}`).toBe(lit);
        }
      });
    }
  }

  it('values worked out behind constants, locals and value wrappers, checked against the lines that define them', () => {
    const k = fields('v1.36.3', 'kubelet');
    const lines = fileLines('k8s.io/kubernetes', 'v1.36.3', DEFAULTS.kubelet.file);
    const mtf = k.find((f) => f.key === 'memoryThrottlingFactor')!.default!;
    expect(reopenSite(mtf.at)).toMatch(
      /obj\.MemoryThrottlingFactor = ptr\.To\(DefaultMemoryThrottlingFactor\)/,
    );
    expect(lines.find((l) => /^\s*DefaultMemoryThrottlingFactor\s*=/.test(l))).toMatch(
      new RegExp(`=\\s*${mtf.value.replace('.', '\\.')}$`),
    );
    expect(mtf.value).toBe('0.9');
    expect(reopenSite(k.find((f) => f.key === 'syncFrequency')!.default!.at)).toContain(
      'metav1.Duration{Duration: 1 * time.Minute}',
    );
    expect(k.find((f) => f.key === 'syncFrequency')!.default!.value).toBe('1m0s');
    const p = fields('v1.36.3', 'kube-proxy');
    const masq = p.find((f) => f.key === 'iptables.masqueradeBit')!.default!;
    expect(reopenSite(masq.at)).toContain('obj.IPTables.MasqueradeBit = &temp');
    expect(reopenSite({ ...masq.at, line: masq.at.line - 1 })).toContain('temp := int32(14)');
    expect(masq.value).toBe('14');
    expect(p.find((f) => f.key === 'conntrack.maxPerCore')!.default!.value).toBe(String(32 * 1024));
  });
});

describe("doc comments: Default: (where SetDefaults has no assignment) and Deprecated:, from the field's own comment", () => {
  for (const version of VERSIONS) {
    for (const component of Object.keys(DEFAULTS)) {
      it(`${component} ${version}: every doc default and deprecation is the field's own comment line, and none is missed`, () => {
        let docDefaults = 0;
        for (const f of fields(version, component)) {
          const r = f.registeredAt;
          const doc = docAbove(fileLines(r.module, r.version, r.file), r.line);
          const dep = doc.find((c) => /^\/\/\s*Deprecated:/.test(c.text));
          expect(f.deprecated?.at.line, `${component} ${version} ${f.key} deprecation`).toBe(
            dep?.line,
          );
          if (dep) {
            expect(f.deprecated!.at.file).toBe(r.file);
            expect(reopenSite(f.deprecated!.at)).toContain(
              `Deprecated: ${f.deprecated!.message.split(' ').slice(0, 3).join(' ')}`,
            );
          }
          if (f.default?.from === 'defaults') continue;
          const defAt = doc.findIndex((c) => /^\/\/\s*Default:/.test(c.text));
          const def = defAt < 0 ? undefined : doc[defAt];
          expect(f.default?.at.line, `${component} ${version} ${f.key} doc default`).toBe(
            def?.line,
          );
          if (def) {
            docDefaults++;
            expect(f.default).toMatchObject({
              from: 'doc',
              value: docDefault(doc, defAt),
              at: { file: r.file, module: r.module, version: r.version },
            });
          }
        }
        if (component === 'kubelet') expect(docDefaults).toBeGreaterThan(0);
      });
    }
  }

  it('memoryThrottlingFactor: 0.9 from SetDefaults at v1.36.3, nil from the doc at v1.37.2 (whose SetDefaults no longer assigns it)', () => {
    const at37 = fields('v1.37.2', 'kubelet').find((f) => f.key === 'memoryThrottlingFactor')!
      .default!;
    expect(at37).toMatchObject({
      from: 'doc',
      value: 'nil',
      at: { module: 'k8s.io/kubelet', version: 'v0.37.2', file: 'config/v1beta1/types.go' },
    });
    expect(reopenSite(at37.at).trim()).toBe('// Default: nil');
    expect(
      fileLines('k8s.io/kubernetes', 'v1.37.2', DEFAULTS.kubelet.file).some((l) =>
        /obj\.MemoryThrottlingFactor\s*=[^=]/.test(l),
      ),
    ).toBe(false);
    expect(reopen(moduleDir('k8s.io/kubernetes', 'v1.36.3'), DEFAULTS.kubelet.file, 297)).toContain(
      'obj.MemoryThrottlingFactor = ptr.To(DefaultMemoryThrottlingFactor)',
    );
  });

  it('the three kubelet fields deprecated at both tags, and only those', () => {
    for (const version of VERSIONS) {
      const dep = fields(version, 'kubelet').filter((f) => f.deprecated);
      expect(dep.map((f) => f.key).sort(), version).toEqual([
        'iptablesDropBit',
        'iptablesMasqueradeBit',
        'streamingConnectionIdleTimeout',
      ]);
      for (const f of dep) expect(f.deprecated!.message).toBe('no longer has any effect.');
      expect(fields(version, 'kube-proxy').filter((f) => f.deprecated)).toEqual([]);
    }
  });
});
