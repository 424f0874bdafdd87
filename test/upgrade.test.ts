// hardwire upgrade plan (issue 24), without a lab: plan.ts on small synthetic maps and the refusals.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FlagEntry, FlagMap, Registration } from '../flags/map.ts';
import { planUpgrade, type FlagStatus } from '../upgrade/plan.ts';
import { checkTarget } from '../upgrade/target.ts';
import { repoRoot } from '../lib/paths.ts';

const CLI = join(repoRoot, 'cli/hardwire.ts');
const EXAMPLE = join(repoRoot, 'hosts/example.yaml');

function hardwire(args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function reg(file: string, line: number, version: string): Registration {
  return { module: 'k8s.io/x', version, file, line, col: 1, url: '', package: 'x', excerpt: '', call: 'pflag.StringVar' };
}

function entry(name: string, version: string, over: Partial<FlagEntry> = {}): FlagEntry {
  return {
    name, type: 'string', default: '', help: '', deprecated: false, hidden: false, field: `o.Options.${name}`, path: `o.${name}`,
    binding: 'field', registeredAt: reg('opts.go', 10, version), readBy: 'read', consumedTotal: 0, consumedAt: [], ...over,
  };
}

function map(version: string, flags: FlagEntry[]): FlagMap {
  return {
    component: 'kube-apiserver', kubernetesVersion: version, componentVersion: version, root: '', method: '',
    coverage: { flags: flags.length, registered: flags.length, withRead: 0, validationOnly: 0, copyOnly: 0, neverRead: 0, unregistered: 0 }, flags, gaps: [],
  };
}

describe('plan.ts on synthetic maps', () => {
  const from = map('v1.36.3', [
    entry('same', 'v0.36.3'), entry('newdefault', 'v0.36.3', { default: '1' }), entry('olddep', 'v0.36.3'),
    entry('oldname', 'v0.36.3', { field: 'o.Options.Renamed', path: 'o.Renamed' }), entry('gone', 'v0.36.3'),
  ]);
  const to = map('v1.37.2', [
    entry('same', 'v0.37.2'), entry('newdefault', 'v0.37.2', { default: '2' }), entry('olddep', 'v0.37.2', { deprecated: true, deprecatedMessage: 'use --same' }),
    entry('newname', 'v0.37.2', { field: 'o.Options.Renamed', path: 'o.Renamed', registeredAt: reg('new.go', 7, 'v0.37.2') }),
  ]);
  const passed = ['same', 'newdefault', 'olddep', 'oldname', 'gone'].map((name) => ({ name, value: 'v' }));
  const rows = planUpgrade({ from: { 'kube-apiserver': from }, to: { 'kube-apiserver': to }, passed: { 'kube-apiserver': passed } })[0]!.rows;
  const status = Object.fromEntries(rows.map((r) => [r.flag, r.status]));

  it('gives each status', () => {
    expect(status).toEqual({ same: 'unchanged', newdefault: 'default-changed', olddep: 'deprecated', oldname: 'renamed', gone: 'removed' } satisfies Record<string, FlagStatus>);
  });

  it('cites the registration at both tags', () => {
    const same = rows.find((r) => r.flag === 'same')!;
    expect(same.from?.registeredAt).toBe('k8s.io/x@v0.36.3/opts.go:10');
    expect(same.to?.registeredAt).toBe('k8s.io/x@v0.37.2/opts.go:10');
    const renamed = rows.find((r) => r.flag === 'oldname')!;
    expect(renamed.to).toBeNull();
    expect(renamed.renamedTo).toEqual({ flag: 'newname', registeredAt: 'k8s.io/x@v0.37.2/new.go:7' });
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

  for (const [to, why] of [['v1.35.0', /downgrade/], ['v1.38.1', /skips a minor/], ['v1.37.9', /no flag map for v1\.37\.9/]] as const) {
    it(`--to ${to}`, () => {
      const r = hardwire(['upgrade', 'plan', '--to', to, '--inventory', EXAMPLE]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^error: --to: /);
      expect(lines[0]).toMatch(why);
    });
  }
});
