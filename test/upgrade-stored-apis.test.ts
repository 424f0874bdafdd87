// Which APIs v1.37.2 stops serving: the committed flags/data/v1.37.2/api-lifecycle.json against
// the generated files in the module cache, scanned here with grep (not the deriver), the kinds the
// plan picks for v1.36.3 → v1.37.2, and the v1.36.3 lines that keep those versions off by default.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { moduleDir, reopen } from './helpers/modcache.ts';
import { hardwire } from './helpers/cli.ts';
import { deriveApiLifecycle, type ApiLifecycle } from '../harness/flags/api-lifecycle.ts';
import { DISABLED_AT_SOURCE, removedBetween } from '../core/upgrade/stored-apis.ts';

const committed = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'harness/flags/data/v1.37.2/api-lifecycle.json'), 'utf8')) as ApiLifecycle;
const API = moduleDir('k8s.io/api', 'v0.37.2');

/** dir/Kind of every non-List kind whose APILifecycleRemoved() returns 1, 37, by grep. */
function grepRemoved137(): string[] {
  const r = spawnSync('grep', ['-rn', '-A1', '--include=zz_generated.prerelease-lifecycle.go', 'APILifecycleRemoved() (major, minor int)', '.'], { cwd: API, encoding: 'utf8' });
  const lines = r.stdout.split('\n');
  const out: string[] = [];
  lines.forEach((l, i) => {
    const m = /^\.\/(.+)\/zz_generated\.prerelease-lifecycle\.go:\d+:func \(in \*(\w+)\)/.exec(l);
    if (m && !m[2]!.endsWith('List') && /-\s*return 1, 37$/.test(lines[i + 1] ?? '')) out.push(`${m[1]}/${m[2]}`);
  });
  return out.sort();
}

describe('APIs removed at v1.37.2', () => {
  it('the committed list is what the module cache says now', () => {
    expect(deriveApiLifecycle('v1.37.2')).toEqual(committed);
  });

  it('the kinds removed at 1.37 are those grep finds, each cited at its APILifecycleRemoved()', () => {
    const picked = removedBetween(committed.kinds, 'v1.36.3', 'v1.37.2');
    const found = grepRemoved137();
    expect(found).toEqual(['certificates/v1alpha1/ClusterTrustBundle', 'networking/v1beta1/IPAddress', 'networking/v1beta1/ServiceCIDR', 'storage/v1beta1/VolumeAttributesClass']);
    expect(picked.map((k) => `${k.removedAt.split('/').slice(2, 4).join('/')}/${k.kind}`).sort()).toEqual(found);
    for (const k of picked) {
      const [, file, line] = /^k8s\.io\/api@v0\.37\.2\/(.+):(\d+)$/.exec(k.removedAt)!;
      expect(reopen(API, file!, Number(line))).toBe(`func (in *${k.kind}) APILifecycleRemoved() (major, minor int) {`);
      const register = readFileSync(join(API, file!, '..', 'register.go'), 'utf8');
      expect(register).toContain(`const GroupName = "${k.group}"`);
    }
  });

  it('v1.36.3 disables each of those group/versions by default, at the lines cited', () => {
    const root = moduleDir('k8s.io/kubernetes', 'v1.36.3');
    const instance = readFileSync(join(root, 'pkg/controlplane/instance.go'), 'utf8');
    const gvs = [...new Set(removedBetween(committed.kinds, 'v1.36.3', 'v1.37.2').map((k) => `${k.group}/${k.version}`))].sort();
    expect(Object.keys(DISABLED_AT_SOURCE['v1.36.3']!).sort()).toEqual(gvs);
    for (const [gv, cite] of Object.entries(DISABLED_AT_SOURCE['v1.36.3']!)) {
      const line = Number(cite.split(':').at(-1));
      const alias = /^\s*(\w+)\.SchemeGroupVersion,$/.exec(reopen(root, 'pkg/controlplane/instance.go', line))![1]!;
      // The alias is the import of that group/version's package.
      const pkg = `${gv.split('.')[0]}/${gv.split('/')[1]}`;
      expect(instance).toContain(`\t${alias} "k8s.io/api/${pkg}"`);
      // and the line sits in a DisabledByDefault list.
      const before = instance.split('\n').slice(0, line).reverse().find((l) => /= \[\]schema\.GroupVersion\{/.test(l));
      expect(before).toMatch(/DisabledByDefault = /);
    }
  });

  it('--offline plans from the maps alone and says in every form that the live checks were skipped', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hardwire-offline-'));
    const md = join(dir, 'p.md');
    const text = hardwire(['upgrade', 'plan', '--to', 'v1.37.2', '--offline', '--inventory', join(import.meta.dirname, '..', 'hosts/example.yaml'), '--md', md, '--quiet']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^live checks skipped: --offline: verify's gates and the objects stored in APIs v1\.37\.2 removes were not read/m);
    expect(readFileSync(md, 'utf8')).toContain('live checks skipped: --offline');
    const json = hardwire(['upgrade', 'plan', '--to', 'v1.37.2', '--offline', '--inventory', join(import.meta.dirname, '..', 'hosts/example.yaml'), '--json', '--quiet']);
    expect((JSON.parse(json.stdout) as { live: { checked: boolean } }).live.checked).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  });
});
