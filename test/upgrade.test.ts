// hardwire upgrade plan (issue 24), without a lab: plan.ts on small synthetic maps, the refusals,
// and the plan v1.36.3 → v1.37.2 against the committed flag maps, each asserted row re-derived
// here from the two JSON files.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { FlagEntry, FlagMap, Registration } from '../core/flags/map.ts';
import { planUpgrade, type FlagStatus } from '../core/upgrade/plan.ts';
import { checkTarget } from '../core/upgrade/target.ts';
import { repoRoot } from '../lib/paths.ts';

const CLI = join(repoRoot, 'cli/hardwire.ts');
const EXAMPLE = join(repoRoot, 'hosts/example.yaml');

function hardwire(args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function reg(file: string, line: number, version: string): Registration {
  return {
    module: 'k8s.io/x',
    version,
    file,
    line,
    col: 1,
    url: '',
    package: 'x',
    excerpt: '',
    call: 'pflag.StringVar',
  };
}

function entry(name: string, version: string, over: Partial<FlagEntry> = {}): FlagEntry {
  return {
    name,
    type: 'string',
    default: '',
    help: '',
    deprecated: false,
    hidden: false,
    field: `o.Options.${name}`,
    path: `o.${name}`,
    binding: 'field',
    registeredAt: reg('opts.go', 10, version),
    readBy: 'read',
    consumedTotal: 0,
    consumedAt: [],
    ...over,
  };
}

function map(version: string, flags: FlagEntry[]): FlagMap {
  return {
    component: 'kube-apiserver',
    kubernetesVersion: version,
    componentVersion: version,
    root: '',
    method: '',
    coverage: {
      flags: flags.length,
      registered: flags.length,
      withRead: 0,
      validationOnly: 0,
      copyOnly: 0,
      neverRead: 0,
      unregistered: 0,
    },
    flags,
    gaps: [],
  };
}

describe('plan.ts on synthetic maps', () => {
  const from = map('v1.36.3', [
    entry('same', 'v0.36.3'),
    entry('newdefault', 'v0.36.3', { default: '1' }),
    entry('olddep', 'v0.36.3'),
    entry('oldname', 'v0.36.3', { field: 'o.Options.Renamed', path: 'o.Renamed' }),
    entry('gone', 'v0.36.3'),
  ]);
  const to = map('v1.37.2', [
    entry('same', 'v0.37.2'),
    entry('newdefault', 'v0.37.2', { default: '2' }),
    entry('olddep', 'v0.37.2', { deprecated: true, deprecatedMessage: 'use --same' }),
    entry('newname', 'v0.37.2', {
      field: 'o.Options.Renamed',
      path: 'o.Renamed',
      registeredAt: reg('new.go', 7, 'v0.37.2'),
    }),
  ]);
  const passed = ['same', 'newdefault', 'olddep', 'oldname', 'gone'].map((name) => ({
    name,
    value: 'v',
  }));
  const rows = planUpgrade({
    from: { 'kube-apiserver': from },
    to: { 'kube-apiserver': to },
    passed: { 'kube-apiserver': passed },
  })[0]!.rows;
  const status = Object.fromEntries(rows.map((r) => [r.flag, r.status]));

  it('gives each status', () => {
    expect(status).toEqual({
      same: 'unchanged',
      newdefault: 'default-changed',
      olddep: 'deprecated',
      oldname: 'renamed',
      gone: 'removed',
    } satisfies Record<string, FlagStatus>);
  });

  it('cites the registration at both tags', () => {
    const same = rows.find((r) => r.flag === 'same')!;
    expect(same.from?.registeredAt).toBe('k8s.io/x@v0.36.3/opts.go:10');
    expect(same.to?.registeredAt).toBe('k8s.io/x@v0.37.2/opts.go:10');
    const renamed = rows.find((r) => r.flag === 'oldname')!;
    expect(renamed.to).toBeNull();
    expect(renamed.renamedTo).toEqual({
      flag: 'newname',
      registeredAt: 'k8s.io/x@v0.37.2/new.go:7',
    });
  });

  it('walks the binary flag set, not the registration file: a flag whose file still registers others is removed', () => {
    // `gone` shares opts.go:10's file with flags that stay; only the flag set decides.
    expect(to.flags.some((f) => f.registeredAt?.file === 'opts.go')).toBe(true);
    expect(status.gone).toBe('removed');
  });
});

describe('refusals (exit 2, one line)', () => {
  const mapped = ['v1.36.3', 'v1.37.2'];
  it('checkTarget', () => {
    expect(() => checkTarget('v1.36.3', 'v1.36.1', mapped)).toThrow(/downgrade/);
    expect(() => checkTarget('v1.36.3', 'v1.38.0', mapped)).toThrow(/skips a minor/);
    expect(() => checkTarget('v1.36.3', 'v1.37.9', mapped)).toThrow(/no flag map for v1.37.9/);
    expect(() => checkTarget('v1.36.3', 'v1.37.2', mapped)).not.toThrow();
  });

  for (const [to, why] of [
    ['v1.35.0', /downgrade/],
    ['v1.38.1', /skips a minor version from v1\.36\.3/],
    ['v1.37.9', /no flag map for v1\.37\.9/],
  ] as const) {
    it(`--to ${to}`, () => {
      const r = hardwire(['upgrade', 'plan', '--to', to, '--offline', '--inventory', EXAMPLE]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^error: --to: /);
      expect(lines[0]).toMatch(why);
    });
  }
});

type Side = { flags: FlagEntry[]; componentVersion: string };
function committed(version: string, component: string): Side {
  return JSON.parse(
    readFileSync(join(repoRoot, 'core', 'flags', 'data', version, `${component}.json`), 'utf8'),
  ) as Side;
}
/** etcd's tables are one per hop: each end's map by etcd version (a release's etcd.json, or the etcd-only map). */
const ETCD_AT: Record<string, [string, string]> = {
  'v3.6.8': ['v1.36.3', 'etcd'],
  'v3.6.16': ['etcd', 'v3.6.16'],
  'v3.7.0': ['v1.37.2', 'etcd'],
};
const cite = (f: FlagEntry) =>
  f.registeredAt
    ? `${f.registeredAt.module}@${f.registeredAt.version}/${f.registeredAt.file}:${f.registeredAt.line}`
    : null;

describe('the plan v1.36.3 → v1.37.2 against the committed maps', () => {
  it('reports every passed flag with the status and citations the two JSON files give', () => {
    const r = hardwire([
      'upgrade',
      'plan',
      '--to',
      'v1.37.2',
      '--offline',
      '--inventory',
      EXAMPLE,
      '--json',
    ]);
    const doc = JSON.parse(r.stdout) as {
      from: string;
      to: string;
      blocking: number;
      components: {
        component: string;
        fromVersion: string;
        toVersion: string;
        rows: {
          flag: string;
          status: string;
          from: { registeredAt: string } | null;
          to: { registeredAt: string } | null;
        }[];
      }[];
    };
    expect(doc.from).toBe('v1.36.3');
    expect(doc.components.map((c) => c.component)).toEqual([
      'etcd',
      'etcd',
      'kube-apiserver',
      'kube-controller-manager',
      'kube-scheduler',
    ]);
    expect(r.code).toBe(doc.blocking === 0 ? 0 : 1);
    let checked = 0;
    for (const c of doc.components) {
      const a =
        c.component === 'etcd'
          ? committed(...ETCD_AT[c.fromVersion]!)
          : committed('v1.36.3', c.component);
      const b =
        c.component === 'etcd'
          ? committed(...ETCD_AT[c.toVersion]!)
          : committed('v1.37.2', c.component);
      for (const row of c.rows) {
        const fa = a.flags.find((f) => f.name === row.flag);
        const fb = b.flags.find((f) => f.name === row.flag);
        // Read independently: absent from the target set = blocking; else deprecated, default, same.
        const want = !fb
          ? ['removed', 'renamed']
          : fb.deprecated
            ? ['deprecated']
            : fa && fa.default !== fb.default
              ? ['default-changed']
              : ['unchanged'];
        expect(want, `${c.component} --${row.flag}`).toContain(row.status);
        expect(row.from?.registeredAt ?? null).toBe(fa ? cite(fa) : null);
        expect(row.to?.registeredAt ?? null).toBe(fb ? cite(fb) : null);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(70);
    // One flag spelled out: the apiserver's --etcd-servers, at both tags.
    const etcdServers = doc.components
      .find((c) => c.component === 'kube-apiserver')!
      .rows.find((x) => x.flag === 'etcd-servers')!;
    expect(etcdServers.from?.registeredAt).toMatch(
      /^k8s\.io\/apiserver@v0\.36\.3\/pkg\/server\/options\/etcd\.go:\d+$/,
    );
    expect(etcdServers.to?.registeredAt).toMatch(
      /^k8s\.io\/apiserver@v0\.37\.2\/pkg\/server\/options\/etcd\.go:\d+$/,
    );
  }, 120_000);

  it('a flag removed at the target, passed through extraArgs, blocks with exit 1 and both citations', () => {
    // Picked from the data: in v1.36.3's kube-controller-manager flag set, not in v1.37.2's
    // (--concurrent-service-syncs on 2026-12-02; kube-apiserver v1.37.2 removed none).
    const component = 'kube-controller-manager';
    const a = committed('v1.36.3', component);
    const b = committed('v1.37.2', component);
    const gone = a.flags.find((f) => !f.hidden && !b.flags.some((g) => g.name === f.name));
    if (!gone) throw new Error(`v1.37.2 removed no ${component} flag: pick another component`);
    const dir = mkdtempSync(join(tmpdir(), 'hardwire-upgrade-'));
    try {
      const inv = parse(readFileSync(EXAMPLE, 'utf8')) as {
        cluster: { extraArgs?: Record<string, Record<string, string>> };
      };
      inv.cluster.extraArgs = {
        ...inv.cluster.extraArgs,
        [component]: { [gone.name]: gone.default === '' ? 'x' : gone.default },
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
      expect(r.code, r.stderr).toBe(1);
      const doc = JSON.parse(r.stdout) as {
        components: {
          component: string;
          rows: {
            flag: string;
            status: string;
            from: { registeredAt: string } | null;
            to: unknown;
            renamedTo?: unknown;
          }[];
        }[];
      };
      const row = doc.components
        .find((c) => c.component === component)!
        .rows.find((x) => x.flag === gone.name)!;
      expect(row.to).toBeNull();
      expect(['removed', 'renamed']).toContain(row.status);
      expect(row.from?.registeredAt).toBe(cite(gone));
      const text = hardwire([
        'upgrade',
        'plan',
        '--to',
        'v1.37.2',
        '--offline',
        '--inventory',
        file,
      ]);
      expect(text.code).toBe(1);
      expect(text.stdout).toMatch(new RegExp(`--${gone.name}\\s+(removed|renamed)`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
