// upgrade plan (issue 24): feature gates an inventory sets through extraArgs, judged from the gate
// spec tables at both tags. Expectations are re-read here from the Go source in the module cache
// with plain text matching (not the go/ast dump the plan uses), and every cited line is re-opened.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { hardwire } from './helpers/cli.ts';
import { repoRoot } from '../lib/paths.ts';

const MODCACHE = process.env.GOMODCACHE ?? join(homedir(), '.cache', 'hardwire', 'gomod');
const EXAMPLE = join(repoRoot, 'hosts/example.yaml');

function source(ref: string): string[] {
  const file = join(MODCACHE, ref);
  if (!existsSync(file)) throw new Error(`${file} is missing: go mod download the module first`);
  return readFileSync(file, 'utf8').split('\n');
}

/** The spec in force at minor `emulated`, read as text: the entry's `{Version: version.MustParse("1.x"), ...}` lines. */
function specByText(
  lines: string[],
  gate: string,
  emulated: number,
): { line: number; default: boolean; locked: boolean } | null {
  const start = lines.findIndex((l) => l === `\t${gate}: {`);
  if (start < 0) return null;
  let hit: { line: number; default: boolean; locked: boolean } | null = null;
  for (let i = start + 1; i < lines.length && !/^\t},?$/.test(lines[i]!); i++) {
    const m = /Version: version\.MustParse\("1\.(\d+)"\), Default: (true|false)/.exec(lines[i]!);
    if (m && Number(m[1]) <= emulated)
      hit = {
        line: i + 1,
        default: m[2] === 'true',
        locked: /LockToDefault: true/.test(lines[i]!),
      };
  }
  return hit;
}

const K36 = 'k8s.io/kubernetes@v1.36.3/pkg/features/kube_features.go';
const K37 = 'k8s.io/kubernetes@v1.37.2/pkg/features/kube_features.go';
// Picked from both trees (2026-12-02): removed at 1.37; locked to true at 1.37 (set false here);
// locked to true at 1.37 and set true; default false → true.
const GATES = {
  AuthorizeNodeWithSelectors: true,
  DRAPrioritizedList: false,
  HPAConfigurableTolerance: true,
  ClusterTrustBundle: false,
};

interface Row {
  gate: string;
  status: string;
  blocking: boolean;
  from: { at: string } | null;
  to: { at: string } | null;
  searched?: string[];
}

describe('feature gates set through extraArgs, at v1.36.3 and v1.37.2', () => {
  const k36 = source(K36);
  const k37 = source(K37);
  const dir = mkdtempSync(join(tmpdir(), 'hardwire-gates-'));
  const inv = parse(readFileSync(EXAMPLE, 'utf8')) as {
    cluster: { extraArgs?: Record<string, Record<string, string>> };
  };
  inv.cluster.extraArgs = {
    'kube-apiserver': {
      'feature-gates': Object.entries(GATES)
        .map(([g, v]) => `${g}=${v}`)
        .join(','),
    },
  };
  const file = join(dir, 'inv.yaml');
  writeFileSync(file, stringify(inv));
  const r = hardwire([
    'upgrade',
    'plan',
    '--to',
    'v1.37.2',
    '--offline',
    '--inventory',
    file,
    '--json',
  ]);
  rmSync(dir, { recursive: true, force: true });
  const doc = JSON.parse(r.stdout || '{}') as {
    blocking: number;
    gates: { component: string; rows: Row[] }[];
  };
  const rows = doc.gates?.find((g) => g.component === 'kube-apiserver')?.rows ?? [];
  const row = (g: string) => rows.find((x) => x.gate === g)!;

  it('the source confirms the picks: AuthorizeNodeWithSelectors is in v1.36.3 and gone from v1.37.2', () => {
    expect(specByText(k36, 'AuthorizeNodeWithSelectors', 36)).toMatchObject({
      default: true,
      locked: true,
    });
    expect(k37.some((l) => l.includes('AuthorizeNodeWithSelectors'))).toBe(false);
    expect(specByText(k37, 'DRAPrioritizedList', 37)).toMatchObject({
      default: true,
      locked: true,
    });
    expect(specByText(k36, 'DRAPrioritizedList', 36)).toMatchObject({ locked: false });
  });

  it('a removed gate and a gate locked to the other value block: exit 1, both named', () => {
    expect(r.code, r.stderr).toBe(1);
    expect(row('AuthorizeNodeWithSelectors')).toMatchObject({
      status: 'removed',
      blocking: true,
      to: null,
    });
    expect(row('DRAPrioritizedList')).toMatchObject({ status: 'locked', blocking: true });
    expect(row('HPAConfigurableTolerance')).toMatchObject({ status: 'locked', blocking: false });
    expect(row('ClusterTrustBundle')).toMatchObject({ status: 'default-changed', blocking: false });
    expect(doc.blocking).toBeGreaterThanOrEqual(2);
    const text = hardwire([
      'upgrade',
      'plan',
      '--to',
      'v1.37.2',
      '--offline',
      '--inventory',
      EXAMPLE,
    ]);
    expect(text.stdout).toMatch(/etcd v3\.6\.8 → v3\.7\.0/); // the example sets no gate: no gate table, exit per flags only
  });

  it('cites each gate at both tags, at the lines the text reading finds', () => {
    const removed = row('AuthorizeNodeWithSelectors');
    expect(removed.from?.at).toBe(
      `${K36}:${specByText(k36, 'AuthorizeNodeWithSelectors', 36)!.line}`,
    );
    expect(removed.searched).toContain(K37);
    for (const g of ['DRAPrioritizedList', 'HPAConfigurableTolerance', 'ClusterTrustBundle']) {
      const want36 = specByText(k36, g, 36);
      const want37 = specByText(k37, g, 37);
      expect(row(g).from?.at, g).toBe(`${K36}:${want36!.line}`);
      expect(row(g).to?.at, g).toBe(`${K37}:${want37!.line}`);
    }
  });

  it('every cited line resolves in the module cache to a spec of that gate', () => {
    for (const x of rows) {
      for (const at of [x.from?.at, x.to?.at].filter((a): a is string => !!a)) {
        const [ref, line] = [
          at.slice(0, at.lastIndexOf(':')),
          Number(at.slice(at.lastIndexOf(':') + 1)),
        ];
        const lines = source(ref);
        expect(lines[line - 1], at).toMatch(/Default: (true|false)/);
        const key = lines
          .slice(0, line)
          .reverse()
          .find((l) => /^\t\S.*: \{$/.test(l));
        expect(key, at).toContain(x.gate);
      }
    }
  });
});
