// Which APIs v1.37.2 stops serving: the committed flags/data/v1.37.2/api-lifecycle.json against
// the generated files in the module cache, scanned here with grep (not the deriver), the kinds the
// plan picks for v1.36.3 → v1.37.2, and the v1.36.3 lines that keep those versions off by default.
// Then the group/versions with no APILifecycleRemoved() whose package k8s.io/api v0.37.2 no longer
// has: found here with find over both module trees, and each cited registration re-opened.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { moduleDir, reopen } from './helpers/modcache.ts';
import { hardwire } from './helpers/cli.ts';
import { deriveApiLifecycle, type ApiLifecycle } from '../harness/flags/api-lifecycle.ts';
import { previousPin } from '../harness/flags/regenerate.ts';
import { modcache } from './helpers/modcache.ts';
import { DISABLED_AT_SOURCE, removedBetween } from '../core/upgrade/stored-apis.ts';

const committed = JSON.parse(
  readFileSync(
    join(import.meta.dirname, '..', 'core/flags/data/v1.37.2/api-lifecycle.json'),
    'utf8',
  ),
) as ApiLifecycle;
const API = moduleDir('k8s.io/api', 'v0.37.2');

/** dir/Kind of every non-List kind whose APILifecycleRemoved() returns 1, 37, by grep. */
function grepRemoved137(): string[] {
  const r = spawnSync(
    'grep',
    [
      '-rn',
      '-A1',
      '--include=zz_generated.prerelease-lifecycle.go',
      'APILifecycleRemoved() (major, minor int)',
      '.',
    ],
    { cwd: API, encoding: 'utf8' },
  );
  const lines = r.stdout.split('\n');
  const out: string[] = [];
  lines.forEach((l, i) => {
    const m = /^\.\/(.+)\/zz_generated\.prerelease-lifecycle\.go:\d+:func \(in \*(\w+)\)/.exec(l);
    if (m && !m[2]!.endsWith('List') && /-\s*return 1, 37$/.test(lines[i + 1] ?? ''))
      out.push(`${m[1]}/${m[2]}`);
  });
  return out.sort();
}

describe('APIs removed at v1.37.2', () => {
  it('the committed list is what the module cache says now', () => {
    // The regeneration compares with the previous minor's tree: v1.36.3's.
    expect(previousPin('v1.37.2')).toBe('v1.36.3');
    expect(deriveApiLifecycle('v1.37.2', modcache, 'v1.36.3')).toEqual(committed);
    expect(committed.comparedWith).toBe('k8s.io/api@v0.36.3');
  });

  it('the kinds removed at 1.37 are those grep finds, each cited at its APILifecycleRemoved()', () => {
    const picked = removedBetween(committed.kinds, 'v1.36.3', 'v1.37.2').filter((k) => !k.gone);
    const found = grepRemoved137();
    expect(found).toEqual([
      'certificates/v1alpha1/ClusterTrustBundle',
      'networking/v1beta1/IPAddress',
      'networking/v1beta1/ServiceCIDR',
      'storage/v1beta1/VolumeAttributesClass',
    ]);
    expect(
      picked.map((k) => `${k.removedAt.split('/').slice(2, 4).join('/')}/${k.kind}`).sort(),
    ).toEqual(found);
    for (const k of picked) {
      const [, file, line] = /^k8s\.io\/api@v0\.37\.2\/(.+):(\d+)$/.exec(k.removedAt)!;
      expect(reopen(API, file!, Number(line))).toBe(
        `func (in *${k.kind}) APILifecycleRemoved() (major, minor int) {`,
      );
      const register = readFileSync(join(API, file!, '..', 'register.go'), 'utf8');
      expect(register).toContain(`const GroupName = "${k.group}"`);
    }
  });

  it('v1.36.3 disables each of those group/versions by default, at the lines cited', () => {
    const root = moduleDir('k8s.io/kubernetes', 'v1.36.3');
    const instance = readFileSync(join(root, 'pkg/controlplane/instance.go'), 'utf8');
    const gvs = [
      ...new Set(
        removedBetween(committed.kinds, 'v1.36.3', 'v1.37.2').map((k) => `${k.group}/${k.version}`),
      ),
    ].sort();
    expect(Object.keys(DISABLED_AT_SOURCE['v1.36.3']!).sort()).toEqual(gvs);
    for (const [gv, cite] of Object.entries(DISABLED_AT_SOURCE['v1.36.3']!)) {
      const line = Number(cite.split(':').at(-1));
      const alias = /^\s*(\w+)\.SchemeGroupVersion,$/.exec(
        reopen(root, 'pkg/controlplane/instance.go', line),
      )![1]!;
      // The alias is the import of that group/version's package.
      const pkg = `${gv.split('.')[0]}/${gv.split('/')[1]}`;
      expect(instance).toContain(`\t${alias} "k8s.io/api/${pkg}"`);
      // and the line sits in a DisabledByDefault list.
      const before = instance
        .split('\n')
        .slice(0, line)
        .reverse()
        .find((l) => /= \[\]schema\.GroupVersion\{/.test(l));
      expect(before).toMatch(/DisabledByDefault = /);
    }
  });

  it('--offline plans from the maps alone and says in every form that the live checks were skipped', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hardwire-offline-'));
    const md = join(dir, 'p.md');
    const text = hardwire([
      'upgrade',
      'plan',
      '--to',
      'v1.37.2',
      '--offline',
      '--inventory',
      join(import.meta.dirname, '..', 'hosts/example.yaml'),
      '--md',
      md,
      '--quiet',
    ]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      /^live checks skipped: --offline: verify's gates and the objects stored in APIs v1\.37\.2 removes were not read/m,
    );
    expect(readFileSync(md, 'utf8')).toContain('live checks skipped: --offline');
    const json = hardwire([
      'upgrade',
      'plan',
      '--to',
      'v1.37.2',
      '--offline',
      '--inventory',
      join(import.meta.dirname, '..', 'hosts/example.yaml'),
      '--json',
      '--quiet',
    ]);
    expect((JSON.parse(json.stdout) as { live: { checked: boolean } }).live.checked).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  });
});

/** Group/version package dirs (a register.go in a v1, v1beta1… directory) of a k8s.io/api tree, by find. */
function versionDirs(root: string): string[] {
  const r = spawnSync('find', ['.', '-name', 'register.go', '-path', '*/v[0-9]*/register.go'], {
    cwd: root,
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout
    .trim()
    .split('\n')
    .map((l) => l.replace(/^\.\//, '').replace(/\/register\.go$/, ''))
    .filter((d) => /\/v\d+((alpha|beta)\d+)?$/.test(d))
    .sort();
}

describe('group/versions gone from k8s.io/api between v0.36.3 and v0.37.2 with no APILifecycleRemoved()', () => {
  const OLD = moduleDir('k8s.io/api', 'v0.36.3');
  const gone = committed.kinds.filter((k) => k.gone);

  it('are the package dirs find sees at v0.36.3 and not at v0.37.2, each kind listed as removed at 1.37', () => {
    const before = versionDirs(OLD);
    const after = new Set(versionDirs(API));
    expect(before.length).toBeGreaterThan(50);
    const dropped = before.filter((d) => !after.has(d));
    expect(dropped).toEqual(['scheduling/v1alpha2']);
    expect([...new Set(gone.map((k) => k.removedAt.split('/').slice(2, -1).join('/')))]).toEqual(
      dropped,
    );
    // Removed at the target's minor: the plan picks them with the rest.
    const picked = removedBetween(committed.kinds, 'v1.36.3', 'v1.37.2');
    for (const k of gone) expect(picked).toContainEqual(k);
  });

  it('had no APILifecycleRemoved() to say so; each kind is cited at its AddKnownTypes line, group from register.go', () => {
    const pkg = join(OLD, 'scheduling/v1alpha2');
    const lifecycle = spawnSync('grep', ['-rl', 'APILifecycleRemoved', '.'], {
      cwd: pkg,
      encoding: 'utf8',
    });
    expect(lifecycle.stdout).toBe('');
    const register = readFileSync(join(pkg, 'register.go'), 'utf8');
    expect(register).toContain('const GroupName = "scheduling.k8s.io"');
    // Every non-List type the package registers, read with grep.
    const grep = spawnSync('grep', ['-n', '-P', '^\\t\\t&[A-Za-z]+\\{\\},$', 'register.go'], {
      cwd: pkg,
      encoding: 'utf8',
    });
    const registered = grep.stdout
      .trim()
      .split('\n')
      .map((l) => /^(\d+):\t\t&(\w+)\{\},$/.exec(l)!)
      .filter((m) => !m[2]!.endsWith('List'));
    expect(registered.map((m) => m[2]).sort()).toEqual(gone.map((k) => k.kind).sort());
    for (const k of gone) {
      expect(k).toMatchObject({ group: 'scheduling.k8s.io', version: 'v1alpha2', removed: '1.37' });
      const [, line] = /^k8s\.io\/api@v0\.36\.3\/scheduling\/v1alpha2\/register\.go:(\d+)$/.exec(
        k.removedAt,
      )!;
      expect(reopen(OLD, 'scheduling/v1alpha2/register.go', Number(line))).toBe(
        `\t\t&${k.kind}{},`,
      );
    }
  });
});
