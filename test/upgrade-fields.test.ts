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
import type { ConfigFieldEntry, FlagMap, Site } from '../core/flags/map.ts';
import { blocking, planUpgrade } from '../core/upgrade/plan.ts';
import { formatMarkdown, formatText, planDoc } from '../core/upgrade/format.ts';
import { formatHtml } from '../core/upgrade/html.ts';
import { loadValidInventory } from '../core/validate/inventory.ts';
import { kubeletConfig } from '../core/components/models/kubelet.ts';
import { kubeProxyConfig } from '../core/components/models/kube-proxy.ts';
import { repoRoot } from '../lib/paths.ts';
import { unbroken } from '../lib/html.ts';

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
    const {
      apiVersion: _a,
      kind: _k,
      ...doc
    } = parse(render({ inv, host })) as Record<string, unknown>;
    for (const k of leaves('', doc)) keys.add(k);
  }
  return [...keys].sort();
}

function committedConfig(version: string, component: string): ConfigFieldEntry[] {
  return (
    JSON.parse(
      readFileSync(join(repoRoot, 'core', 'flags', 'data', version, `${component}.json`), 'utf8'),
    ) as FlagMap
  ).config!.fields;
}

type Row = {
  key: string;
  status: string;
  note: string;
  from: { registeredAt: string } | null;
  to: { registeredAt: string } | null;
};
type Unset = {
  key: string;
  from: { value: string; at: string } | null;
  to: { value: string; at: string } | null;
};

describe('the config fields of the rendered files, v1.36.3 → v1.37.2, against the committed maps', () => {
  const r = hardwire([
    'upgrade',
    'plan',
    '--to',
    'v1.37.2',
    '--offline',
    '--inventory',
    WORKERS,
    '--json',
  ]);
  const doc = JSON.parse(r.stdout) as {
    blocking: number;
    components: { component: string; fields: Row[]; unsetDefaults?: Unset[] }[];
  };

  for (const [component, render] of [
    ['kubelet', kubeletConfig],
    ['kube-proxy', kubeProxyConfig],
  ] as const) {
    it(`${component}: every key its file sets, with the status and declarations the two JSON files give`, () => {
      const rows = doc.components.find((c) => c.component === component)!.fields;
      expect(rows.map((x) => x.key).sort()).toEqual(renderedKeys(render));
      const a = committedConfig('v1.36.3', component);
      const b = committedConfig('v1.37.2', component);
      for (const row of rows) {
        const fa = a.find((f) => f.key === row.key);
        const fb = b.find((f) => f.key === row.key);
        expect(fa, `${component} ${row.key} at v1.36.3`).toBeDefined();
        // A default equal in both files cannot have changed; one that differs only in spelling ("4h", 4h0m0s) may stay unchanged.
        const sameDefault = fa!.default?.value === fb?.default?.value;
        if (!fb) expect(row.status, `${component} ${row.key}`).toBe('removed');
        else if (fb.deprecated) expect(row.status, `${component} ${row.key}`).toBe('deprecated');
        else if (sameDefault) expect(row.status, `${component} ${row.key}`).toBe('unchanged');
        else
          expect(['unchanged', 'default-changed'], `${component} ${row.key}`).toContain(row.status);
        if (row.status === 'default-changed')
          expect(row.note).toContain(`${ref(fa!.default!.at)}) → `);
        expect(row.from?.registeredAt).toBe(ref(fa!.registeredAt));
        expect(row.to?.registeredAt ?? null).toBe(fb ? ref(fb.registeredAt) : null);
      }
    });
  }

  it("the kubelet's file leaves memoryThrottlingFactor unset: its default 0.9 → nil is listed, both lines re-read in the module cache", () => {
    const kubelet = doc.components.find((c) => c.component === 'kubelet')!;
    const c = kubelet.unsetDefaults!.find((x) => x.key === 'memoryThrottlingFactor')!;
    expect(c).toMatchObject({ from: { value: '0.9' }, to: { value: 'nil' } });
    const [fromFile, fromLine] = c.from!.at.replace('k8s.io/kubernetes@v1.36.3/', '').split(':');
    expect(
      reopen(moduleDir('k8s.io/kubernetes', 'v1.36.3'), fromFile!, Number(fromLine)),
    ).toContain('obj.MemoryThrottlingFactor = ptr.To(DefaultMemoryThrottlingFactor)');
    const [toFile, toLine] = c.to!.at.replace('k8s.io/kubelet@v0.37.2/', '').split(':');
    expect(reopen(moduleDir('k8s.io/kubelet', 'v0.37.2'), toFile!, Number(toLine)).trim()).toBe(
      '// Default: nil',
    );
    const set = new Set(kubelet.fields.map((f) => f.key));
    expect(kubelet.unsetDefaults!.filter((x) => set.has(x.key))).toEqual([]);
  });

  it("one field spelled out: the kubelet's readOnlyPort, declared in k8s.io/kubelet at both tags", () => {
    const row = doc.components
      .find((c) => c.component === 'kubelet')!
      .fields.find((x) => x.key === 'readOnlyPort')!;
    expect(row.from?.registeredAt).toMatch(
      /^k8s\.io\/kubelet@v0\.36\.3\/config\/v1beta1\/types\.go:\d+$/,
    );
    expect(row.to?.registeredAt).toMatch(
      /^k8s\.io\/kubelet@v0\.37\.2\/config\/v1beta1\/types\.go:\d+$/,
    );
    expect(r.code).toBe(doc.blocking === 0 ? 0 : 1);
  });
});

function site(module: string, version: string, line: number): Site {
  return {
    module,
    version,
    file: 'config/v1beta1/types.go',
    line,
    col: 2,
    url: '',
    package: `${module}/config/v1beta1`,
    excerpt: '',
  };
}

function field(
  key: string,
  version: string,
  line: number,
  internal = `config.KubeletConfiguration.${key}`,
): ConfigFieldEntry {
  return {
    key,
    goField: key,
    type: 'string',
    field: internal,
    path: internal,
    registeredAt: site('k8s.io/kubelet', version, line),
    readBy: 'read',
    consumedTotal: 0,
    consumedAt: [],
  };
}

function map(kubernetesVersion: string, fields: ConfigFieldEntry[]): FlagMap {
  return {
    component: 'kubelet',
    kubernetesVersion,
    componentVersion: kubernetesVersion,
    root: '',
    method: '',
    gaps: [],
    flags: [],
    coverage: {
      flags: 0,
      registered: 0,
      withRead: 0,
      validationOnly: 0,
      copyOnly: 0,
      neverRead: 0,
      unregistered: 0,
    },
    config: {
      type: 'k8s.io/kubelet/config/v1beta1.KubeletConfiguration',
      internalType: '',
      coverage: {
        fields: 0,
        withRead: 0,
        validationOnly: 0,
        copyOnly: 0,
        neverRead: 0,
        noInternal: 0,
      },
      fields,
    },
  };
}

describe('config fields on synthetic maps', () => {
  const from = map('v1.36.3', [
    field('kept', 'v0.36.3', 10),
    field('gone', 'v0.36.3', 20),
    field('oldName', 'v0.36.3', 30, 'config.KubeletConfiguration.Moved'),
  ]);
  const to = map('v1.37.2', [
    field('kept', 'v0.37.2', 11),
    field('newName', 'v0.37.2', 31, 'config.KubeletConfiguration.Moved'),
  ]);
  const plans = planUpgrade({
    from: { kubelet: from },
    to: { kubelet: to },
    passed: { kubelet: [] },
    fields: { kubelet: ['kept', 'gone', 'oldName'].map((key) => ({ key, value: '"x"' })) },
  });
  const rows = plans[0]!.fields;
  const gone = rows.find((x) => x.key === 'gone')!;

  it('a field gone at the target blocks, cited at the source and where the target type lacks it', () => {
    expect(gone.status).toBe('removed');
    expect(gone.from?.registeredAt).toBe('k8s.io/kubelet@v0.36.3/config/v1beta1/types.go:20');
    expect(gone.to).toBeNull();
    expect(gone.absentFrom).toBe(
      'k8s.io/kubelet@v0.37.2/config/v1beta1/types.go (KubeletConfiguration)',
    );
    expect(
      blocking(plans)
        .map((b) => b.name)
        .sort(),
    ).toEqual(['gone', 'oldName']);
  });

  it('a kept field is unchanged with both declarations; a key whose internal field a new key fills is renamed', () => {
    expect(rows.find((x) => x.key === 'kept')).toMatchObject({
      status: 'unchanged',
      from: { registeredAt: 'k8s.io/kubelet@v0.36.3/config/v1beta1/types.go:10' },
      to: { registeredAt: 'k8s.io/kubelet@v0.37.2/config/v1beta1/types.go:11' },
    });
    expect(rows.find((x) => x.key === 'oldName')).toMatchObject({
      status: 'renamed',
      renamedTo: {
        key: 'newName',
        registeredAt: 'k8s.io/kubelet@v0.37.2/config/v1beta1/types.go:31',
      },
    });
  });

  it('the note cites what the v1.37.2 kubelet does with the unknown key, and those lines say it', () => {
    expect(gone.note).toContain(
      'k8s.io/kubernetes@v1.37.2/pkg/kubelet/kubeletconfig/util/codec/codec.go:78 and :102',
    );
    const k = moduleDir('k8s.io/kubernetes', 'v1.37.2');
    expect(reopen(k, 'pkg/kubelet/kubeletconfig/util/codec/codec.go', 78)).toContain(
      'Try strict decoding first. If that fails decode with a lenient',
    );
    expect(reopen(k, 'pkg/kubelet/kubeletconfig/util/codec/codec.go', 102)).toContain(
      'Using lenient decoding as strict decoding failed',
    );
    expect(reopen(k, 'cmd/kube-proxy/app/options.go', 482)).toContain(
      'Try strict decoding first. If that fails decode with a lenient',
    );
    expect(reopen(k, 'cmd/kube-proxy/app/options.go', 502)).toContain(
      'Using lenient decoding as strict decoding failed',
    );
  });
});

/** A synthetic field with a default (SetDefaults' line in defaults.go, or the doc's line in types.go) and a deprecation. */
function decorated(
  f: ConfigFieldEntry,
  d?: { value: string; from: 'defaults' | 'doc'; line: number },
  deprecatedAt?: number,
): ConfigFieldEntry {
  const v = f.registeredAt.version;
  const at = (line: number, file: string) => ({
    ...f.registeredAt,
    line,
    file,
    ...(file.startsWith('pkg/')
      ? { module: 'k8s.io/kubernetes', version: v.replace('v0.', 'v1.') }
      : {}),
  });
  return {
    ...f,
    ...(d
      ? {
          default: {
            value: d.value,
            from: d.from,
            at: at(
              d.line,
              d.from === 'doc'
                ? 'config/v1beta1/types.go'
                : 'pkg/kubelet/apis/config/v1beta1/defaults.go',
            ),
          },
        }
      : {}),
    ...(deprecatedAt
      ? {
          deprecated: {
            message: 'no longer has any effect.',
            at: at(deprecatedAt, 'config/v1beta1/types.go'),
          },
        }
      : {}),
  };
}

describe("config fields' defaults and deprecations on synthetic maps (non-blocking)", () => {
  const D = (value: string, line: number) => ({ value, from: 'defaults' as const, line });
  const doc = (value: string, line: number) => ({ value, from: 'doc' as const, line });
  const from = map('v1.36.3', [
    decorated(field('respelled', 'v0.36.3', 10), D('4h0m0s', 100)),
    decorated(field('factor', 'v0.36.3', 20), D('0.9', 297)),
    decorated(field('stillDeprecated', 'v0.36.3', 30), D('14', 120), 28),
    decorated(field('newlyDeprecated', 'v0.36.3', 40), D('true', 130)),
    decorated(field('quiet', 'v0.36.3', 50), D('10', 140)),
    decorated(field('quietSame', 'v0.36.3', 60), D('5', 150)),
    decorated(field('quietGone', 'v0.36.3', 70), D('1', 160)),
  ]);
  const to = map('v1.37.2', [
    decorated(field('respelled', 'v0.37.2', 11), doc('"4h"', 9)),
    decorated(field('factor', 'v0.37.2', 904), doc('nil', 904)),
    decorated(field('stillDeprecated', 'v0.37.2', 31), D('14', 121), 29),
    decorated(field('newlyDeprecated', 'v0.37.2', 41), D('true', 131), 39),
    decorated(field('quiet', 'v0.37.2', 51), D('20', 141)),
    decorated(field('quietSame', 'v0.37.2', 61), doc('5', 59)),
    decorated(field('quietGone', 'v0.37.2', 71)),
  ]);
  const plans = planUpgrade({
    from: { kubelet: from },
    to: { kubelet: to },
    passed: { kubelet: [] },
    fields: {
      kubelet: ['respelled', 'factor', 'stillDeprecated', 'newlyDeprecated'].map((key) => ({
        key,
        value: '"x"',
      })),
    },
  });
  const rows = plans[0]!.fields;
  const get = (key: string) => rows.find((x) => x.key === key)!;
  const K = 'k8s.io/kubernetes';

  it('a changed default is default-changed, the old and the new default cited; a respelled one ("4h", 4h0m0s) is unchanged', () => {
    expect(get('factor')).toMatchObject({
      status: 'default-changed',
      from: {
        default: {
          value: '0.9',
          from: 'defaults',
          at: `${K}@v1.36.3/pkg/kubelet/apis/config/v1beta1/defaults.go:297`,
        },
      },
      to: {
        default: {
          value: 'nil',
          from: 'doc',
          at: 'k8s.io/kubelet@v0.37.2/config/v1beta1/types.go:904',
        },
      },
    });
    expect(get('factor').note).toBe(
      `default 0.9 (SetDefaults at ${K}@v1.36.3/pkg/kubelet/apis/config/v1beta1/defaults.go:297) → nil (doc comment at k8s.io/kubelet@v0.37.2/config/v1beta1/types.go:904)`,
    );
    expect(get('respelled').status).toBe('unchanged');
  });

  it('a field deprecated at the target is deprecated, its Deprecated: line cited at both tags, or said new', () => {
    expect(get('stillDeprecated').status).toBe('deprecated');
    expect(get('stillDeprecated').note).toBe(
      'deprecated at v1.36.3 too (k8s.io/kubelet@v0.36.3/config/v1beta1/types.go:28); at v1.37.2: "no longer has any effect." (k8s.io/kubelet@v0.37.2/config/v1beta1/types.go:29)',
    );
    expect(get('newlyDeprecated').status).toBe('deprecated');
    expect(get('newlyDeprecated').note).toMatch(
      /^newly deprecated \(not at v1\.36\.3\); at v1\.37\.2: "no longer has any effect\." \(k8s\.io\/kubelet@v0\.37\.2\/config\/v1beta1\/types\.go:39\)$/,
    );
  });

  it('the unset fields whose default changes are listed, the set ones and the unchanged ones are not', () => {
    expect(plans[0]!.unsetDefaults!.map((c) => c.key)).toEqual(['quiet', 'quietGone']);
    expect(plans[0]!.unsetDefaults![1]).toMatchObject({
      from: { value: '1', at: `${K}@v1.36.3/pkg/kubelet/apis/config/v1beta1/defaults.go:160` },
      to: null,
    });
  });

  it('none of it blocks, and text, Markdown, HTML and JSON all carry the statuses and the unset line', () => {
    expect(blocking(plans)).toEqual([]);
    const d = planDoc({
      from: 'v1.36.3',
      to: 'v1.37.2',
      components: plans,
      gates: [],
      new: [],
      etcd: { from: 'v3.6.8', to: 'v3.7.0', toCite: '', hops: [] },
      order: [],
    });
    expect(d.blocking).toBe(0);
    const line = `default changes at v1.37.2 of config fields the file leaves unset (2): quiet 10 (SetDefaults at ${K}@v1.36.3/pkg/kubelet/apis/config/v1beta1/defaults.go:140) → 20 (SetDefaults at ${K}@v1.37.2/pkg/kubelet/apis/config/v1beta1/defaults.go:141); quietGone 1 (SetDefaults at ${K}@v1.36.3/pkg/kubelet/apis/config/v1beta1/defaults.go:160) → no default recorded`;
    const text = formatText(d);
    expect(text).toContain(`\n${line}\n`);
    expect(text).toMatch(
      /^factor +default-changed +k8s\.io\/kubelet@v0\.36\.3\/config\/v1beta1\/types\.go:20 +k8s\.io\/kubelet@v0\.37\.2\/config\/v1beta1\/types\.go:904 +default 0\.9 /m,
    );
    expect(text).toMatch(/^stillDeprecated +deprecated /m);
    expect(formatMarkdown(d)).toContain(`\n${line}\n`);
    expect(formatMarkdown(d)).toMatch(/^\| newlyDeprecated \| deprecated \|/m);
    const html = unbroken(formatHtml(d));
    expect(html).toContain(`<p class="unset-defaults">${line.replace(/>/g, '&gt;')}</p>`);
    expect(html).toMatch(/<tr class="default-changed"><td class="name">factor<\/td>/);
    const json = JSON.parse(JSON.stringify(d)) as typeof d;
    expect(json.components[0]!.unsetDefaults!.map((c) => c.key)).toEqual(['quiet', 'quietGone']);
    expect(json.components[0]!.fields.map((r) => r.status)).toEqual([
      'unchanged',
      'default-changed',
      'deprecated',
      'deprecated',
    ]);
  });
});
