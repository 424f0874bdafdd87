// Every source path in a --json document names a real module version (issue 40): each
// `<module>@<version>/<file>` in any string, and each object with module, version and file, names a
// version other than v0.0.0 whose file the Go module cache holds. The documents are made with no
// lab: `flags <component> --json` and `upgrade plan --offline --json` run as a user would; compare's
// report from its fixture; the saved flags prove reports and the committed proof records; the trace
// recorded in docs/flags.md, its delve stacks naming kube-aggregator by the debug build's v0.0.0.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hardwire } from './helpers/cli.ts';
import { fixtureReport } from './helpers/compare-fixture.ts';
import { moduleDir } from './helpers/modcache.ts';
import { recordedTrace } from './helpers/recorded-trace.ts';
import { mappedComponents } from '../core/flags/map.ts';
import { repoRoot } from '../lib/paths.ts';

interface Source {
  module: string;
  version: string;
  file: string;
  at: string;
}

// A module path's first element has a dot; the file ends in an extension (a :line may follow).
const IN_TEXT =
  /(?<![\w./-])((?:[\w-]+\.)+[a-z]{2,}(?:\/[\w.~-]+)*)@(v\d[^/\s"]*)\/([\w.~/-]+\.[a-z]+)/g;

/** Every source path in a JSON document, with where in it. */
export function sources(doc: unknown, at = '$'): Source[] {
  if (typeof doc === 'string')
    return [...doc.matchAll(IN_TEXT)].map((m) => ({
      module: m[1]!,
      version: m[2]!,
      file: m[3]!,
      at,
    }));
  if (Array.isArray(doc)) return doc.flatMap((d, i) => sources(d, `${at}[${i}]`));
  if (doc && typeof doc === 'object') {
    const o = doc as Record<string, unknown>;
    const own =
      typeof o.module === 'string' && typeof o.version === 'string' && typeof o.file === 'string'
        ? [{ module: o.module, version: o.version, file: o.file, at }]
        : [];
    return [...own, ...Object.entries(o).flatMap(([k, v]) => sources(v, `${at}.${k}`))];
  }
  return [];
}

/** What is wrong with each source: a v0.0.0, or a file the cache does not hold at that version. */
function unresolved(all: Source[]): string[] {
  const seen = new Map<string, boolean>();
  const bad: string[] = [];
  for (const s of all) {
    const key = `${s.module}@${s.version}/${s.file}`;
    if (!seen.has(key))
      seen.set(
        key,
        s.version !== 'v0.0.0' && existsSync(join(moduleDir(s.module, s.version), s.file)),
      );
    if (!seen.get(key)) bad.push(`${s.at}: ${key}`);
  }
  return bad;
}

const json = (args: string[]): unknown => {
  const r = hardwire(args);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
};
const readJson = (...p: string[]) => JSON.parse(readFileSync(join(repoRoot, ...p), 'utf8'));

const DOCS: Record<string, () => unknown> = {
  ...Object.fromEntries(
    mappedComponents().map((c) => [`flags ${c} --json`, () => json(['flags', c, '--json'])]),
  ),
  'flags explain kube-apiserver --etcd-servers --json': () =>
    json(['flags', 'explain', 'kube-apiserver', '--etcd-servers', '--json']),
  'upgrade plan --to v1.37.2 --offline --json (example-workers.yaml)': () =>
    json([
      'upgrade',
      'plan',
      '--to',
      'v1.37.2',
      '--offline',
      '--inventory',
      'hosts/example-workers.yaml',
      '--json',
    ]),
  'compare --json (fixture)': () => JSON.parse(JSON.stringify(fixtureReport())),
  ...Object.fromEntries(
    readdirSync(join(repoRoot, 'test', 'fixtures', 'prove')).map((f) => [
      `flags prove --json (test/fixtures/prove/${f})`,
      () => readJson('test', 'fixtures', 'prove', f),
    ]),
  ),
  ...Object.fromEntries(
    readdirSync(join(repoRoot, 'core', 'flags', 'proven', 'v1.36.3')).map((f) => [
      `flags prove --record (core/flags/proven/v1.36.3/${f})`,
      () => readJson('core', 'flags', 'proven', 'v1.36.3', f),
    ]),
  ),
  'trace apply --json (recorded trace)': () => JSON.parse(JSON.stringify(recordedTrace())),
};

describe('every source path in a --json document names a real module version', () => {
  it.each(Object.keys(DOCS))('%s', (name) => {
    const all = sources(DOCS[name]!());
    console.log(`${name}: ${all.length} source paths`);
    expect(all.length).toBeGreaterThan(0);
    expect(unresolved(all)).toEqual([]);
  });
});
