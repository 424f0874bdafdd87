// upgrade plan (issue 24): one etcd flag table per hop (v3.6.8 → v3.6.16 → v3.7.0), each flag the
// units pass checked in etcd's own flag set at both ends of that hop. Every row is re-derived here
// from the three committed JSON files, read straight from disk (not through harness/flags).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { hardwire } from './helpers/cli.ts';
import type { FlagEntry } from '../core/flags/map.ts';
import { etcdHopPlans, type EtcdMapAt } from '../core/upgrade/etcd-flags.ts';
import { etcdHops } from '../core/upgrade/etcd.ts';
import { etcdMapFile, loadEtcdMap } from '../core/flags/etcd-maps.ts';
import { ETCD_ONLY_PINS } from '../harness/flags/etcd-regenerate.ts';
import { ETCD_STEPS } from '../core/components/binaries/catalog.ts';
import { repoRoot } from '../lib/paths.ts';
import { unbroken } from '../lib/html.ts';

const EXAMPLE = join(repoRoot, 'hosts/example.yaml');
const FILES: Record<string, string> = {
  'v3.6.8': 'core/flags/data/v1.36.3/etcd.json',
  'v3.6.16': 'core/flags/data/etcd/v3.6.16.json',
  'v3.7.0': 'core/flags/data/v1.37.2/etcd.json',
};
const committed = (v: string) =>
  JSON.parse(readFileSync(join(repoRoot, FILES[v]!), 'utf8')) as {
    componentVersion: string;
    flags: FlagEntry[];
  };
const cite = (f: FlagEntry | undefined) =>
  f?.registeredAt
    ? `${f.registeredAt.module}@${f.registeredAt.version}/${f.registeredAt.file}:${f.registeredAt.line}`
    : null;

interface Row {
  flag: string;
  status: string;
  from: { registeredAt: string | null } | null;
  to: { registeredAt: string | null } | null;
}
interface Doc {
  blocking: number;
  etcd: { hops: { from: string; to: string; flags: string }[] };
  components: { component: string; fromVersion: string; toVersion: string; rows: Row[] }[];
}

/** The status the two flag sets give, read independently of core/upgrade/plan.ts. */
function want(a: FlagEntry | undefined, b: FlagEntry | undefined): string[] {
  if (!b) return ['removed', 'renamed'];
  if (b.deprecated) return ['deprecated'];
  return a && a.default !== b.default ? ['default-changed'] : ['unchanged'];
}

const plan = (inv: string, extra: string[] = []) =>
  hardwire(['upgrade', 'plan', '--to', 'v1.37.2', '--offline', '--inventory', inv, ...extra]);
const etcdTables = (doc: Doc) => doc.components.filter((c) => c.component === 'etcd');

describe('the committed etcd-only map at v3.6.16', () => {
  it('each hop-only etcd of the build table has its analyzer build list and a committed map', () => {
    expect(Object.keys(ETCD_ONLY_PINS)).toEqual([...ETCD_STEPS]);
    for (const v of ETCD_STEPS) {
      expect(existsSync(etcdMapFile(v)), v).toBe(true);
      expect(existsSync(join(repoRoot, 'harness/flags/analyzer/etcd', ETCD_ONLY_PINS[v]!)), v).toBe(
        true,
      );
    }
  });

  it("is etcd v3.6.16's, cited in etcd v3.6.16's own module, with no Kubernetes release", () => {
    const m = committed('v3.6.16') as ReturnType<typeof committed> & { kubernetesVersion?: string };
    expect(m.componentVersion).toBe('v3.6.16');
    expect(m.kubernetesVersion).toBeUndefined();
    expect(m.flags.length).toBeGreaterThan(100);
    for (const f of m.flags.filter((x) => x.registeredAt?.module.startsWith('go.etcd.io/etcd/')))
      expect(f.registeredAt!.version, f.name).toBe('v3.6.16');
  });
});

describe('upgrade plan v1.36.3 → v1.37.2: an etcd table per hop', () => {
  const r = plan(EXAMPLE, ['--json']);
  // A refused plan (exit 2) prints no document: the first test then fails on the exit code, with the line.
  const doc = (
    r.stdout ? JSON.parse(r.stdout) : { blocking: 0, etcd: { hops: [] }, components: [] }
  ) as Doc;

  it('two etcd tables, v3.6.8 → v3.6.16 and v3.6.16 → v3.7.0, each row as the JSON files at both ends give it', () => {
    expect(r.code, r.stderr).toBe(doc.blocking === 0 ? 0 : 1);
    const tables = etcdTables(doc);
    expect(tables.map((t) => `${t.fromVersion}→${t.toVersion}`)).toEqual([
      'v3.6.8→v3.6.16',
      'v3.6.16→v3.7.0',
    ]);
    expect(tables[0]!.rows.map((x) => x.flag)).toEqual(tables[1]!.rows.map((x) => x.flag));
    expect(tables[0]!.rows.length).toBeGreaterThan(15);
    for (const t of tables) {
      const [a, b] = [committed(t.fromVersion), committed(t.toVersion)];
      for (const row of t.rows) {
        const [fa, fb] = [
          a.flags.find((f) => f.name === row.flag),
          b.flags.find((f) => f.name === row.flag),
        ];
        expect(want(fa, fb), `${t.fromVersion}→${t.toVersion} --${row.flag}`).toContain(row.status);
        expect(row.from?.registeredAt ?? null).toBe(cite(fa));
        expect(row.to?.registeredAt ?? null).toBe(cite(fb));
        // Cited at each end in that end's own etcd module.
        expect(row.from?.registeredAt).toContain(`@${t.fromVersion}/`);
        if (fb) expect(row.to?.registeredAt).toContain(`@${t.toVersion}/`);
      }
    }
  });

  it('each hop names the two committed maps its table was checked in', () => {
    expect(doc.etcd.hops.map((h) => h.flags)).toEqual([
      `checked in ${FILES['v3.6.8']} and ${FILES['v3.6.16']} (the etcd v3.6.8 → v3.6.16 table)`,
      `checked in ${FILES['v3.6.16']} and ${FILES['v3.7.0']} (the etcd v3.6.16 → v3.7.0 table)`,
    ]);
  });
});

describe('a flag etcd v3.7.0 removed, passed through extraArgs', () => {
  // Picked from the data: in etcd's flag set at v3.6.8 and v3.6.16, not at v3.7.0.
  const [a, m, b] = ['v3.6.8', 'v3.6.16', 'v3.7.0'].map(committed) as [
    ReturnType<typeof committed>,
    ReturnType<typeof committed>,
    ReturnType<typeof committed>,
  ];
  const gone = m.flags.find(
    (f) =>
      f.name.startsWith('experimental-') &&
      f.type === 'bool' &&
      a.flags.some((x) => x.name === f.name) &&
      !b.flags.some((x) => x.name === f.name),
  );
  const dir = mkdtempSync(join(tmpdir(), 'hardwire-etcd-hops-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is blocking at the second hop with its registration at v3.6.16, and cited at both ends of the first', () => {
    if (!gone)
      throw new Error(
        'etcd v3.7.0 removed no experimental-* bool flag of v3.6.8 and v3.6.16: pick another',
      );
    const inv = parse(readFileSync(EXAMPLE, 'utf8')) as {
      cluster: { extraArgs?: Record<string, Record<string, string>> };
    };
    inv.cluster.extraArgs = { ...inv.cluster.extraArgs, etcd: { [gone.name]: gone.default } };
    const file = join(dir, 'inv.yaml');
    writeFileSync(file, stringify(inv));
    const r = plan(file, ['--json']);
    expect(r.code, r.stderr).toBe(1);
    const doc = JSON.parse(r.stdout) as Doc;
    expect(doc.blocking).toBeGreaterThanOrEqual(1);
    const [first, second] = etcdTables(doc).map((t) => t.rows.find((x) => x.flag === gone.name)!);
    expect(first!.status).not.toMatch(/^(removed|renamed)$/);
    expect(first!.from?.registeredAt).toBe(cite(a.flags.find((f) => f.name === gone.name)));
    expect(first!.to?.registeredAt).toBe(cite(gone));
    expect(second!.status).toBe('removed');
    expect(second!.from?.registeredAt).toBe(cite(gone));
    expect(second!.from?.registeredAt).toMatch(
      /^go\.etcd\.io\/etcd\/server\/v3@v3\.6\.16\/.+:\d+$/,
    );
    expect(second!.to).toBeNull();
    // Text, Markdown and HTML: both hop tables, the flag removed under the second.
    const md = join(dir, 'plan.md');
    const html = join(dir, 'plan.html');
    const text = plan(file, ['--md', md, '--html', html]);
    expect(text.code).toBe(1);
    const second16 = text.stdout.slice(text.stdout.indexOf('etcd v3.6.16 → v3.7.0 ('));
    expect(text.stdout).toContain('etcd v3.6.8 → v3.6.16 (');
    expect(second16.slice(0, second16.indexOf('\n\n'))).toMatch(
      new RegExp(
        `--${gone.name}\\s+removed\\s+${cite(gone)!.replace(/[.]/g, '\\.')}\\s+\\(not registered\\)`,
      ),
    );
    const mdText = readFileSync(md, 'utf8');
    expect(mdText).toContain('## etcd v3.6.8 → v3.6.16');
    expect(mdText).toMatch(
      new RegExp(
        `## etcd v3\\.6\\.16 → v3\\.7\\.0\\n(?:.*\\n)*?\\| --${gone.name} \\| removed \\| \``,
      ),
    );
    const page = unbroken(readFileSync(html, 'utf8'));
    expect(page).toContain('<h2>etcd v3.6.8 → v3.6.16</h2>');
    expect(page).toContain('<h2>etcd v3.6.16 → v3.7.0</h2>');
    expect(page).toContain(`<tr class="removed"><td class="name">--${gone.name}</td>`);
  });
});

describe('etcd feature gates set through extraArgs', () => {
  const GATE_FILES: Record<string, string> = {
    'v3.6.8': 'core/flags/data/v1.36.3/feature-gates.json',
    'v3.6.16': 'core/flags/data/etcd/v3.6.16.feature-gates.json',
    'v3.7.0': 'core/flags/data/v1.37.2/feature-gates.json',
  };
  type Table = {
    module: string;
    version: string;
    file: string;
    gates: { name: string; specs: { default: boolean; line: number }[] }[];
  };
  const etcdTable = (v: string) =>
    (
      JSON.parse(readFileSync(join(repoRoot, GATE_FILES[v]!), 'utf8')) as { tables: Table[] }
    ).tables.find((t) => t.module === 'go.etcd.io/etcd/server/v3')!;
  const dir = mkdtempSync(join(tmpdir(), 'hardwire-etcd-gates-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("are checked at each hop, in etcd's gate table at both ends of it, each spec cited there", () => {
    const inv = parse(readFileSync(EXAMPLE, 'utf8')) as {
      cluster: { extraArgs?: Record<string, Record<string, string>> };
    };
    inv.cluster.extraArgs = {
      ...inv.cluster.extraArgs,
      etcd: { 'feature-gates': 'InitialCorruptCheck=true,TxnModeWriteWithSharedBuffer=false' },
    };
    const file = join(dir, 'inv.yaml');
    writeFileSync(file, stringify(inv));
    const r = plan(file, ['--json']);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as {
      gates: {
        component: string;
        fromVersion?: string;
        toVersion?: string;
        rows: {
          gate: string;
          status: string;
          from: { at: string } | null;
          to: { at: string } | null;
        }[];
      }[];
    };
    const etcd = doc.gates.filter((g) => g.component === 'etcd');
    expect(etcd.map((g) => `${g.fromVersion}→${g.toVersion}`)).toEqual([
      'v3.6.8→v3.6.16',
      'v3.6.16→v3.7.0',
    ]);
    for (const g of etcd) {
      const [a, b] = [etcdTable(g.fromVersion!), etcdTable(g.toVersion!)];
      expect(g.rows.map((x) => x.gate)).toEqual([
        'InitialCorruptCheck',
        'TxnModeWriteWithSharedBuffer',
      ]);
      for (const row of g.rows) {
        const at = (t: Table) =>
          `${t.module}@${t.version}/${t.file}:${t.gates.find((x) => x.name === row.gate)!.specs.at(-1)!.line}`;
        expect(row.from?.at, `${g.fromVersion} ${row.gate}`).toBe(at(a));
        expect(row.to?.at, `${g.toVersion} ${row.gate}`).toBe(at(b));
        expect(row.status).toBe('unchanged');
      }
    }
    // In the text form each hop's gate table follows that hop's flag table.
    const text = plan(file).stdout;
    const second = text.slice(
      text.indexOf('etcd v3.6.16 → v3.7.0 ('),
      text.indexOf('kube-apiserver v1.36.3 → v1.37.2'),
    );
    expect(second).toMatch(
      /^InitialCorruptCheck=true\s+unchanged\s+go\.etcd\.io\/etcd\/server\/v3@v3\.6\.16\/features\/etcd_features\.go:\d+\s+go\.etcd\.io\/etcd\/server\/v3@v3\.7\.0\//m,
    );
    expect(second).toContain('go.etcd.io/etcd/server/v3@v3.7.0/features/etcd_features.go:');
  });
});

describe('etcdHopPlans, pure', () => {
  const at = (v: string): EtcdMapAt => loadEtcdMap(v);
  const passed = [{ name: 'name', value: 'node1' }];

  it("compares each hop at its own two ends; no hop: the cluster's etcd against itself", () => {
    const plans = etcdHopPlans('v3.6.8', etcdHops('v3.6.8', 'v3.7.0'), passed, at).plans;
    expect(plans.map((p) => `${p.fromVersion}→${p.toVersion}`)).toEqual([
      'v3.6.8→v3.6.16',
      'v3.6.16→v3.7.0',
    ]);
    expect(
      etcdHopPlans('v3.6.8', [], passed, at).plans.map((p) => `${p.fromVersion}→${p.toVersion}`),
    ).toEqual(['v3.6.8→v3.6.8']);
  });

  it('a hop whose etcd has no map refuses the plan: one line on --etcd', () => {
    const hops = [{ from: 'v3.6.8', to: 'v3.6.99', rules: [] }];
    expect(() => etcdHopPlans('v3.6.8', hops, passed, at)).toThrow(
      /^--etcd: etcd v3\.6\.99 has no flag map \(have: v3\.6\.8, v3\.6\.16, v3\.7\.0\); run "hardwire flags --regenerate --etcd v3\.6\.99" or name one of those$/,
    );
  });
});
