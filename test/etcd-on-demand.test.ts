// etcd's flag map on demand (issue 42, harness/flags/etcd-on-demand.ts): the build list it makes
// with `go mod tidy` builds the same map as the committed one; a version the Go module proxy does
// not serve is one line and writes nothing; k0s's etcd v3.6.14 (no committed map) is built once,
// kept in its cache and found again, and its citations open in the module cache. Needs Go and the
// module proxy; no lab.
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { etcdBuildList, etcdMapOnDemand, ETCD_SERVER } from '../harness/flags/etcd-on-demand.ts';
import { regenerateEtcd } from '../harness/flags/etcd-regenerate.ts';
import { etcdGateFile, etcdMapFile, findEtcdMap } from '../core/flags/etcd-maps.ts';
import { reopenSite } from './helpers/modcache.ts';
import { tempDir } from './helpers/tmp.ts';
import { planFrom } from '../core/upgrade/plan-for.ts';

const steps: string[] = [];
const LOG = { info: () => {}, warn: () => {}, step: (m: string) => steps.push(m) };

describe('etcd flag maps on demand', () => {
  it('the build list made with go mod tidy builds the committed v3.6.16 map and gate table, byte for byte', () => {
    const out = tempDir('hardwire-etcd-od-');
    const modfile = etcdBuildList('v3.6.16', tempDir('hardwire-etcd-bl-'), LOG);
    expect(readFileSync(modfile, 'utf8')).toContain(`${ETCD_SERVER} v3.6.16`);
    regenerateEtcd({ version: 'v3.6.16', outDir: out, modfile, log: LOG });
    for (const [mine, committed] of [
      [join(out, 'v3.6.16.json'), etcdMapFile('v3.6.16')],
      [join(out, 'v3.6.16.feature-gates.json'), etcdGateFile('v3.6.16')],
    ] as const)
      expect(readFileSync(mine).equals(readFileSync(committed)), committed).toBe(true);
  }, 900_000);

  it('a version the module proxy does not serve: one line saying so, nothing written', () => {
    const cache = tempDir('hardwire-etcd-cache-');
    const r = etcdMapOnDemand('v3.6.99', LOG, cache);
    expect('why' in r && r.why).toMatch(
      /^no flag map for etcd v3\.6\.99: the Go module proxy does not serve go\.etcd\.io\/etcd\/server\/v3@v3\.6\.99 \(.*(403|404|410|not found|unknown revision|invalid version)/,
    );
    expect('why' in r && r.why).not.toContain('\n');
    expect(readdirSync(cache)).toEqual([]);
  }, 300_000);

  it("k0s's etcd v3.6.14, which has no committed map: built once into the cache, then found there without a build; its sites open in the module cache", () => {
    expect(findEtcdMap('v3.6.14')).toBeUndefined();
    // A cache of its own, so that this build is never skipped (audit's is ~/.cache/hardwire/flag-maps/etcd).
    const cache = tempDir('hardwire-etcd-cache-');
    steps.length = 0;
    const first = etcdMapOnDemand('v3.6.14', LOG, cache);
    if ('why' in first) throw new Error(first.why);
    expect(steps.join('\n')).toContain('go mod tidy for go.etcd.io/etcd/server/v3@v3.6.14');
    expect(first.file).toBe(join(cache, 'v3.6.14.json'));
    expect(readdirSync(cache).sort()).toEqual(['v3.6.14.feature-gates.json', 'v3.6.14.json']);
    expect(first.map).toMatchObject({ component: 'etcd', componentVersion: 'v3.6.14' });
    steps.length = 0;
    const again = etcdMapOnDemand('v3.6.14', LOG, cache);
    expect(steps).toEqual([]);
    if ('why' in again) throw new Error(again.why);
    expect(again.map).toEqual(first.map);
    const dataDir = again.map.flags.find((f) => f.name === 'data-dir')!;
    expect(dataDir.registeredAt).toMatchObject({ module: ETCD_SERVER, version: 'v3.6.14' });
    expect(reopenSite(dataDir.registeredAt!)).toContain('"data-dir"');
    for (const f of again.map.flags.filter((x) => x.consumedAt.length).slice(0, 20))
      for (const s of f.consumedAt.slice(0, 1))
        expect(reopenSite(s).trim().length, `${f.name} ${s.file}:${s.line}`).toBeGreaterThan(0);
  }, 900_000);

  it("an upgrade plan from k0s's etcd v3.6.14 reads that map for its hop; with committed maps only it is refused on --etcd-to", () => {
    const cache = tempDir('hardwire-etcd-cache-');
    const start = {
      from: 'v1.36.3',
      etcdFrom: 'v3.6.14',
      passed: { etcd: [{ name: 'data-dir', value: '/var/lib/k0s/etcd' }] },
      fields: {},
    };
    expect(() => planFrom(start, 'v1.37.2')).toThrow(/^--etcd-to: etcd v3\.6\.14 has no flag map/);
    const lookup = (v: string) => {
      const r = etcdMapOnDemand(v, LOG, cache);
      if ('why' in r) throw new Error(r.why);
      return r;
    };
    const doc = planFrom(start, 'v1.37.2', undefined, { etcd: lookup });
    // One hop: 3.6.14 is past 3.7's minimum 3.6.11 (core/upgrade/etcd.ts MINOR_ENTRY).
    expect(doc.etcd.hops.map((h) => `${h.from}→${h.to}`)).toEqual(['v3.6.14→v3.7.0']);
    // Its table checks --data-dir in the map built here and in the committed v3.7.0 one.
    const first = doc.components.find((c) => c.component === 'etcd')!;
    expect([first.fromVersion, first.toVersion]).toEqual(['v3.6.14', 'v3.7.0']);
    const row = first.rows.find((f) => f.flag === 'data-dir')!;
    expect(row.from?.registeredAt).toMatch(/^go\.etcd\.io\/etcd\/server\/v3@v3\.6\.14\//);
    expect(row.to?.registeredAt).toMatch(/^go\.etcd\.io\/etcd\/server\/v3@v3\.7\.0\//);
    expect(doc.blocking).toBe(0);
  }, 900_000);
});
