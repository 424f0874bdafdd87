// etcd's flag map by etcd version (issue 24): the maps built per Kubernetes release hold the etcd
// that release pairs with (data/<k8s>/etcd.json, componentVersion v3.6.8 at v1.36.3, v3.7.0 at
// v1.37.2); an etcd an upgrade only passes through has an etcd-only map of its own
// (data/etcd/<etcd>.json, `hardwire flags --regenerate --etcd v3.6.16`), and etcd's feature-gate table
// beside it (data/etcd/<etcd>.feature-gates.json; a release's is in its feature-gates.json). Reading needs no Go.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { InputError } from '../../lib/errors.ts';
import { repoRoot } from '../../lib/paths.ts';
import { dataDir, flagVersions, loadFlagMap, mappedComponents, type FlagMap } from './map.ts';
import { GATE_FILE, type GateData } from './gates.ts';

/** core/flags/data/etcd: the etcd-only maps, one file per etcd version. */
export function etcdDataDir(): string {
  return join(repoRoot, 'core', 'flags', 'data', 'etcd');
}

export function etcdMapFile(version: string): string {
  return join(etcdDataDir(), `${version}.json`);
}

export function etcdGateFile(version: string): string {
  return join(etcdDataDir(), `${version}.${GATE_FILE}`);
}

export interface EtcdMap {
  map: FlagMap;
  /** The committed file, relative to the repository: core/flags/data/etcd/v3.6.16.json. */
  file: string;
  /** etcd's feature-gate table at the same version. */
  gates: GateData;
}

/** Where each etcd version's map and gate table are: its etcd-only files, else a Kubernetes release's of that etcd. */
function sources(): Map<string, { map: string; gates: string }> {
  const out = new Map<string, { map: string; gates: string }>();
  for (const v of flagVersions()) {
    if (!(mappedComponents(v) as string[]).includes('etcd')) continue;
    out.set(loadFlagMap('etcd', v).componentVersion, {
      map: join(dataDir(v), 'etcd.json'),
      gates: join(dataDir(v), GATE_FILE),
    });
  }
  if (existsSync(etcdDataDir())) {
    for (const f of readdirSync(etcdDataDir())
      .filter((n) => /^v\d+\.\d+\.\d+\.json$/.test(n))
      .sort()) {
      const v = f.slice(0, -'.json'.length);
      out.set(v, { map: join(etcdDataDir(), f), gates: etcdGateFile(v) });
    }
  }
  return out;
}

/** Every etcd version with a flag map, oldest first. */
export function etcdMapVersions(): string[] {
  const n = (v: string) => v.slice(1).split('.').map(Number);
  return [...sources().keys()].sort((a, b) => {
    const [x, y] = [n(a), n(b)];
    return x[0]! - y[0]! || x[1]! - y[1]! || x[2]! - y[2]!;
  });
}

const cache = new Map<string, EtcdMap>();

/** etcd's flag map and gate table at one etcd version, or undefined when either is not committed. */
export function findEtcdMap(version: string): EtcdMap | undefined {
  const src = sources().get(version);
  if (!src || !existsSync(src.gates)) return undefined;
  let hit = cache.get(src.map);
  if (!hit) {
    const map = JSON.parse(readFileSync(src.map, 'utf8')) as FlagMap;
    const gates = JSON.parse(readFileSync(src.gates, 'utf8')) as GateData;
    if (map.component !== 'etcd' || map.componentVersion !== version)
      throw new Error(
        `${src.map} is not etcd ${version}'s flag map (${map.component} ${map.componentVersion})`,
      );
    if (gates.etcdVersion !== version)
      throw new Error(`${src.gates} holds etcd ${gates.etcdVersion}'s gates, not ${version}'s`);
    hit = { map, file: relative(repoRoot, src.map), gates };
    cache.set(src.map, hit);
  }
  return hit;
}

/** The same, or one line on `field` naming the versions that have one and how to build another. */
export function loadEtcdMap(version: string, field = '--etcd'): EtcdMap {
  const hit = findEtcdMap(version);
  if (hit) return hit;
  throw new InputError(
    field,
    `etcd ${version} has no flag map (have: ${etcdMapVersions().join(', ')}); run "hardwire flags --regenerate --etcd ${version}" or name one of those`,
  );
}
