// upgrade plan (issue 24): the config fields the rendered kubelet and kube-proxy files set,
// checked in each component's own config section of the flag maps at both versions. The keys are
// read here from the rendered YAML files themselves; each row's status and citations are re-derived
// from the two committed JSON files; a field gone at the target is tried on synthetic maps.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { hardwire } from './helpers/cli.ts';
import { moduleDir, reopen } from './helpers/modcache.ts';
import type { ConfigFieldEntry, FlagMap, Site } from '../harness/flags/map.ts';
import { blocking, planUpgrade } from '../core/upgrade/plan.ts';
import { loadValidInventory } from '../core/validate/inventory.ts';
import { kubeletConfig } from '../core/components/models/kubelet.ts';
import { kubeProxyConfig } from '../core/components/models/kube-proxy.ts';
import { repoRoot } from '../lib/paths.ts';

const WORKERS = join(repoRoot, 'hosts/example-workers.yaml');
const ref = (s: Site) => `${s.module}@${s.version}/${s.file}:${s.line}`;

function leaves(prefix: string, v: unknown): string[] {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return [prefix];
  return Object.entries(v).flatMap(([k, x]) => leaves(prefix ? `${prefix}.${k}` : k, x));
}

/** The json paths a rendered config file sets, read from the YAML the renderer writes. */
function renderedKeys(render: typeof kubeletConfig): string[] {
  const inv = loadValidInventory(WORKERS);
  const keys = new Set<string>();
  for (const host of inv.hosts.filter((h) => h.roles.includes('worker'))) {
    const { apiVersion: _a, kind: _k, ...doc } = parse(render({ inv, host })) as Record<string, unknown>;
    for (const k of leaves('', doc)) keys.add(k);
  }
  return [...keys].sort();
}

function committedConfig(version: string, component: string): ConfigFieldEntry[] {
  return (JSON.parse(readFileSync(join(repoRoot, 'harness', 'flags', 'data', version, `${component}.json`), 'utf8')) as FlagMap).config!.fields;
}

type Row = { key: string; status: string; from: { registeredAt: string } | null; to: { registeredAt: string } | null };

describe('the config fields of the rendered files, v1.36.3 → v1.37.2, against the committed maps', () => {
  const r = hardwire(['upgrade', 'plan', '--to', 'v1.37.2', '--offline', '--inventory', WORKERS, '--json']);
  const doc = JSON.parse(r.stdout) as { blocking: number; components: { component: string; fields: Row[] }[] };

  for (const [component, render] of [['kubelet', kubeletConfig], ['kube-proxy', kubeProxyConfig]] as const) {
    it(`${component}: every key its file sets, with the status and declarations the two JSON files give`, () => {
      const rows = doc.components.find((c) => c.component === component)!.fields;
      expect(rows.map((x) => x.key).sort()).toEqual(renderedKeys(render));
      const a = committedConfig('v1.36.3', component);
      const b = committedConfig('v1.37.2', component);
      for (const row of rows) {
        const fa = a.find((f) => f.key === row.key);
        const fb = b.find((f) => f.key === row.key);
        expect(fa, `${component} ${row.key} at v1.36.3`).toBeDefined();
        expect(row.status, `${component} ${row.key}`).toBe(fb ? 'unchanged' : 'removed');
        expect(row.from?.registeredAt).toBe(ref(fa!.registeredAt));
        expect(row.to?.registeredAt ?? null).toBe(fb ? ref(fb.registeredAt) : null);
      }
    });
  }

  it('one field spelled out: the kubelet\'s readOnlyPort, declared in k8s.io/kubelet at both tags', () => {
    const row = doc.components.find((c) => c.component === 'kubelet')!.fields.find((x) => x.key === 'readOnlyPort')!;
    expect(row.from?.registeredAt).toMatch(/^k8s\.io\/kubelet@v0\.36\.3\/config\/v1beta1\/types\.go:\d+$/);
    expect(row.to?.registeredAt).toMatch(/^k8s\.io\/kubelet@v0\.37\.2\/config\/v1beta1\/types\.go:\d+$/);
    expect(r.code).toBe(doc.blocking === 0 ? 0 : 1);
  });
});

function site(module: string, version: string, line: number): Site {
  return { module, version, file: 'config/v1beta1/types.go', line, col: 2, url: '', package: `${module}/config/v1beta1`, excerpt: '' };
}

function field(key: string, version: string, line: number, internal = `config.KubeletConfiguration.${key}`): ConfigFieldEntry {
  return { key, goField: key, type: 'string', field: internal, path: internal, registeredAt: site('k8s.io/kubelet', version, line), readBy: 'read', consumedTotal: 0, consumedAt: [] };
}

function map(kubernetesVersion: string, fields: ConfigFieldEntry[]): FlagMap {
  return {
    component: 'kubelet', kubernetesVersion, componentVersion: kubernetesVersion, root: '', method: '', gaps: [], flags: [],
    coverage: { flags: 0, registered: 0, withRead: 0, validationOnly: 0, copyOnly: 0, neverRead: 0, unregistered: 0 },
    config: { type: 'k8s.io/kubelet/config/v1beta1.KubeletConfiguration', internalType: '', coverage: { fields: 0, withRead: 0, validationOnly: 0, copyOnly: 0, neverRead: 0, noInternal: 0 }, fields },
  };
}

describe('config fields on synthetic maps', () => {
  const from = map('v1.36.3', [field('kept', 'v0.36.3', 10), field('gone', 'v0.36.3', 20), field('oldName', 'v0.36.3', 30, 'config.KubeletConfiguration.Moved')]);
  const to = map('v1.37.2', [field('kept', 'v0.37.2', 11), field('newName', 'v0.37.2', 31, 'config.KubeletConfiguration.Moved')]);
  const plans = planUpgrade({
    from: { kubelet: from }, to: { kubelet: to }, passed: { kubelet: [] },
    fields: { kubelet: ['kept', 'gone', 'oldName'].map((key) => ({ key, value: '"x"' })) },
  });
  const rows = plans[0]!.fields;
  const gone = rows.find((x) => x.key === 'gone')!;

  it('a field gone at the target blocks, cited at the source and where the target type lacks it', () => {
    expect(gone.status).toBe('removed');
    expect(gone.from?.registeredAt).toBe('k8s.io/kubelet@v0.36.3/config/v1beta1/types.go:20');
    expect(gone.to).toBeNull();
    expect(gone.absentFrom).toBe('k8s.io/kubelet@v0.37.2/config/v1beta1/types.go (KubeletConfiguration)');
    expect(blocking(plans).map((b) => b.name).sort()).toEqual(['gone', 'oldName']);
  });

  it('a kept field is unchanged with both declarations; a key whose internal field a new key fills is renamed', () => {
    expect(rows.find((x) => x.key === 'kept')).toMatchObject({ status: 'unchanged', from: { registeredAt: 'k8s.io/kubelet@v0.36.3/config/v1beta1/types.go:10' }, to: { registeredAt: 'k8s.io/kubelet@v0.37.2/config/v1beta1/types.go:11' } });
    expect(rows.find((x) => x.key === 'oldName')).toMatchObject({ status: 'renamed', renamedTo: { key: 'newName', registeredAt: 'k8s.io/kubelet@v0.37.2/config/v1beta1/types.go:31' } });
  });

  it('the note cites what the v1.37.2 kubelet does with the unknown key, and those lines say it', () => {
    expect(gone.note).toContain('k8s.io/kubernetes@v1.37.2/pkg/kubelet/kubeletconfig/util/codec/codec.go:78 and :102');
    const k = moduleDir('k8s.io/kubernetes', 'v1.37.2');
    expect(reopen(k, 'pkg/kubelet/kubeletconfig/util/codec/codec.go', 78)).toContain('Try strict decoding first. If that fails decode with a lenient');
    expect(reopen(k, 'pkg/kubelet/kubeletconfig/util/codec/codec.go', 102)).toContain('Using lenient decoding as strict decoding failed');
    expect(reopen(k, 'cmd/kube-proxy/app/options.go', 482)).toContain('Try strict decoding first. If that fails decode with a lenient');
    expect(reopen(k, 'cmd/kube-proxy/app/options.go', 502)).toContain('Using lenient decoding as strict decoding failed');
  });
});
