// upgrade plan --etcd-to VERSION (issue 24): the etcd target of the hops. Each refusal is one line on
// --etcd-to with exit 2, on the pure check and through the CLI; the default is read from the committed
// v1.37.2 etcd map (kubeadm v1.37.2's etcd, which the version table pairs with it). The hop-only
// patch v3.6.16 is checked in its etcd-only map (core/flags/data/etcd/v3.6.16.json).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hardwire } from './helpers/cli.ts';
import { etcdTarget } from '../core/upgrade/etcd-target.ts';
import { repoRoot } from '../lib/paths.ts';

const EXAMPLE = join(repoRoot, 'hosts/example.yaml');
const KNOWN = ['v3.6.8', 'v3.6.16', 'v3.7.0'];

describe('etcdTarget, pure', () => {
  it('plans the hops for a version the build table has', () => {
    expect(etcdTarget('v3.6.8', 'v3.7.0', KNOWN).map((h) => `${h.from}→${h.to}`)).toEqual([
      'v3.6.8→v3.6.16',
      'v3.6.16→v3.7.0',
    ]);
    expect(etcdTarget('v3.6.8', 'v3.6.16', KNOWN).map((h) => h.to)).toEqual(['v3.6.16']);
    expect(etcdTarget('v3.6.8', 'v3.6.8', KNOWN)).toEqual([]);
  });

  it('refuses a version the build table does not have', () => {
    expect(() => etcdTarget('v3.6.8', 'v3.7.3', KNOWN)).toThrow(
      /^--etcd-to: etcd v3\.7\.3 is not in the build table \(known: v3\.6\.8, v3\.6\.16, v3\.7\.0\)/,
    );
  });

  it('refuses a downgrade', () => {
    expect(() => etcdTarget('v3.6.16', 'v3.6.8', KNOWN)).toThrow(
      /^--etcd-to: etcd v3\.6\.8 is older than the cluster's v3\.6\.16: a downgrade is not planned$/,
    );
  });

  it("refuses a hop etcd's rule forbids: a skipped minor", () => {
    expect(() => etcdTarget('v3.6.8', 'v3.8.0', [...KNOWN, 'v3.8.0'])).toThrow(
      /^--etcd-to: etcd v3\.6\.8 → v3\.8\.0 skips a minor version/,
    );
  });

  it('refuses when the hop the rule requires (3.6.11 or later before 3.7) cannot be built', () => {
    expect(() => etcdTarget('v3.6.8', 'v3.7.0', ['v3.6.8', 'v3.7.0'])).toThrow(
      /^--etcd-to: etcd v3\.6\.8 → v3\.7\.0 must pass through v3\.6\.16 \(.*upgrade_3_7\.md:19\)/,
    );
  });

  it('refuses what is not a version', () => {
    expect(() => etcdTarget('v3.6.8', '3.7.0', KNOWN)).toThrow(
      /^--etcd-to: "3\.7\.0" is not an etcd version/,
    );
  });
});

describe('upgrade plan --etcd-to through the CLI', () => {
  const plan = (etcd?: string) =>
    hardwire([
      'upgrade',
      'plan',
      '--to',
      'v1.37.2',
      '--offline',
      '--inventory',
      EXAMPLE,
      '--json',
      ...(etcd ? ['--etcd-to', etcd] : []),
    ]);
  type Row = {
    flag: string;
    status: string;
    from: { registeredAt: string } | null;
    to: { registeredAt: string } | null;
    note: string;
  };
  type Doc = {
    blocking: number;
    etcd: {
      from: string;
      to: string;
      hops: { from: string; to: string; rules: { cite: string }[]; flags: string }[];
    };
    components: { component: string; fromVersion: string; toVersion: string; rows: Row[] }[];
    gates: { component: string }[];
  };

  for (const [etcd, why] of [
    [
      'v3.6.1',
      /^error: --etcd-to: etcd v3\.6\.1 is older than the cluster's v3\.6\.8: a downgrade is not planned$/,
    ],
    ['v3.7.9', /^error: --etcd-to: etcd v3\.7\.9 is not in the build table/],
    ['v3.8.0', /^error: --etcd-to: etcd v3\.6\.8 → v3\.8\.0 skips a minor version/],
  ] as const) {
    it(`--etcd-to ${etcd}: exit 2, one line`, () => {
      const r = plan(etcd);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(why);
    });
  }

  it("the default is the target's etcd: the committed v1.37.2 etcd map's version, through v3.6.16", () => {
    const want = (
      JSON.parse(readFileSync(join(repoRoot, 'core/flags/data/v1.37.2/etcd.json'), 'utf8')) as {
        componentVersion: string;
      }
    ).componentVersion;
    const doc = JSON.parse(plan().stdout) as Doc;
    expect(doc.etcd).toMatchObject({ from: 'v3.6.8', to: want });
    expect(doc.etcd.hops.map((h) => h.to)).toEqual(['v3.6.16', want]);
    expect(JSON.parse(plan(want).stdout)).toEqual(doc);
  });

  it("--etcd-to v3.6.8, the cluster's own: no hop, and etcd's flags checked in the v3.6.8 map at both ends", () => {
    const r = plan('v3.6.8');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as Doc;
    expect(doc.etcd).toMatchObject({ from: 'v3.6.8', to: 'v3.6.8', hops: [] });
    const etcd = doc.components.find((c) => c.component === 'etcd')!;
    expect([etcd.fromVersion, etcd.toVersion]).toEqual(['v3.6.8', 'v3.6.8']);
    for (const row of etcd.rows)
      expect(row.to?.registeredAt).toMatch(/^go\.etcd\.io\/etcd\/server\/v3@v3\.6\.8\//);
    expect(doc.components.find((c) => c.component === 'kube-apiserver')!.toVersion).toBe('v1.37.2');
  });

  it("--etcd-to v3.6.16, the hop-only patch: one hop with its rule, etcd's flags checked in its etcd-only map", () => {
    const r = plan('v3.6.16');
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as Doc;
    expect(doc.etcd).toMatchObject({ from: 'v3.6.8', to: 'v3.6.16' });
    expect(doc.etcd.hops.map((h) => `${h.from}→${h.to}`)).toEqual(['v3.6.8→v3.6.16']);
    expect(doc.etcd.hops[0]!.rules.map((x) => x.cite).join(' ')).toContain('upgrading-etcd.md:14');
    expect(doc.etcd.hops[0]!.flags).toBe(
      'checked in core/flags/data/v1.36.3/etcd.json and core/flags/data/etcd/v3.6.16.json (the etcd v3.6.8 → v3.6.16 table)',
    );
    const tables = doc.components.filter((c) => c.component === 'etcd');
    expect(tables.map((t) => [t.fromVersion, t.toVersion])).toEqual([['v3.6.8', 'v3.6.16']]);
    // The same flags the default plan checks, each cited in v3.6.16's module (read from the committed file).
    const m = JSON.parse(
      readFileSync(join(repoRoot, 'core/flags/data/etcd/v3.6.16.json'), 'utf8'),
    ) as { flags: { name: string; registeredAt: { file: string; line: number } | null }[] };
    const byDefault = (JSON.parse(plan().stdout) as Doc).components
      .find((c) => c.component === 'etcd')!
      .rows.map((x) => x.flag);
    expect(tables[0]!.rows.map((x) => x.flag)).toEqual(byDefault);
    for (const row of tables[0]!.rows) {
      const f = m.flags.find((x) => x.name === row.flag)!;
      expect(row.to?.registeredAt, row.flag).toBe(
        `go.etcd.io/etcd/server/v3@v3.6.16/${f.registeredAt!.file}:${f.registeredAt!.line}`,
      );
      expect(row.from?.registeredAt).toMatch(/^go\.etcd\.io\/etcd\/server\/v3@v3\.6\.8\//);
    }
    expect(doc.components.find((c) => c.component === 'kube-apiserver')!.toVersion).toBe('v1.37.2');
    const text = hardwire([
      'upgrade',
      'plan',
      '--to',
      'v1.37.2',
      '--offline',
      '--inventory',
      EXAMPLE,
      '--etcd-to',
      'v3.6.16',
      '--quiet',
    ]);
    expect(text.stdout).toContain('etcd v3.6.8 → v3.6.16 (');
    expect(text.stdout).not.toContain('etcd v3.6.16 → v3.7.0');
  });
});
