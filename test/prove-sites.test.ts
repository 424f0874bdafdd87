// Where `flags prove` sets a tracepoint: a cited site of a replaced staging module is set under the
// name the debug build's DWARF gives it (the required v0.0.0; kube-aggregator, apiextensions), read
// here from the wrapper module's go.mod text; and which flags a run beside the unit changes.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { binaryVersions } from '../harness/delve/modules.ts';
import { planFlags } from '../harness/prove/sites.ts';
import { loadFlagMap } from '../core/flags/map.ts';
import { changedFlags } from '../harness/prove/index.ts';
import { besideArgv } from '../harness/delve/beside.ts';

const goMod = readFileSync('core/components/go/kubernetes/go.mod', 'utf8');

describe('prove: tracepoint file names', () => {
  it('names a kube-aggregator citation at v0.36.3 by the v0.0.0 the go.mod requires', () => {
    // The go.mod says both things, independently of modules.ts: required at v0.0.0, replaced by v0.36.3.
    expect(goMod).toMatch(/^\s+k8s\.io\/kube-aggregator v0\.0\.0\b/m);
    expect(goMod).toMatch(/^\s+k8s\.io\/kube-aggregator => k8s\.io\/kube-aggregator v0\.36\.3$/m);
    const plans = planFlags(
      loadFlagMap('kube-apiserver'),
      ['--proxy-client-cert-file=/x', '--etcd-servers=https://e:2379'],
      binaryVersions(goMod),
    );
    const agg = plans[0]!.sites.filter((s) => s.site.module === 'k8s.io/kube-aggregator');
    expect(agg.length).toBeGreaterThan(0);
    for (const s of agg) {
      expect(s.ref).toMatch(/^k8s\.io\/kube-aggregator@v0\.36\.3\//); // cited, and re-opened, at the tag
      expect(s.file).toBe(`k8s.io/kube-aggregator@v0.0.0/${s.site.file}`);
    }
    // Modules the build does not rename keep the cited version.
    for (const s of plans
      .flatMap((p) => p.sites)
      .filter((x) => x.site.module !== 'k8s.io/kube-aggregator'))
      expect(s.file).toBe(`${s.site.module}@${s.site.version}/${s.site.file}`);
  });

  it('renames only modules replaced by themselves at another version than required', () => {
    const mod =
      'require (\n\ta.io/x v0.0.0 // indirect\n\tb.io/y v1.2.0\n\tc.io/z v0.0.0\n)\nreplace (\n\ta.io/x => a.io/x v0.36.3\n\tb.io/y => b.io/y v1.2.0\n\tc.io/z => ../z\n)\n';
    expect([...binaryVersions(mod)]).toEqual([['a.io/x', { cache: 'v0.36.3', binary: 'v0.0.0' }]]);
  });
});

describe('prove: kube-apiserver beside the unit', () => {
  it("reports the port, audit log and reconciler as changed, with the unit's values", () => {
    const unit = [
      '/usr/local/bin/kube-apiserver',
      '--secure-port=6443',
      '--audit-log-path=/var/log/a.log',
      '--etcd-servers=https://e:2379',
    ];
    const run = besideArgv(unit, '/var/tmp/d');
    expect(run).toContain('--etcd-servers=https://e:2379');
    expect(changedFlags(unit, run)).toEqual([
      { flag: 'secure-port', unit: '6443', run: '16443' },
      { flag: 'audit-log-path', unit: '/var/log/a.log', run: '/var/tmp/d/audit.log' },
      { flag: 'endpoint-reconciler-type', run: 'none' },
    ]);
  });
});
