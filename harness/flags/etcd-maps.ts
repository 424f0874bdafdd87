// etcd's flag map by etcd version (issue 24): the maps built per Kubernetes release hold the etcd
// that release pairs with (data/<k8s>/etcd.json, componentVersion v3.6.8 at v1.36.3, v3.7.0 at
// v1.37.2); an etcd an upgrade only passes through has an etcd-only map of its own
// (data/etcd/<etcd>.json, `hardwire flags --regenerate --etcd v3.6.16`). Reading needs no Go.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { InputError } from '../../lib/errors.ts';
import { repoRoot } from '../../lib/paths.ts';
import { dataDir, flagVersions, loadFlagMap, mappedComponents, type FlagMap } from './map.ts';

/** harness/flags/data/etcd: the etcd-only maps, one file per etcd version. */
export function etcdDataDir(): string {
  return join(repoRoot, 'harness', 'flags', 'data', 'etcd');
}

export function etcdMapFile(version: string): string {
  return join(etcdDataDir(), `${version}.json`);
}

export interface EtcdMap {
  map: FlagMap;
  /** The committed file, relative to the repository: harness/flags/data/etcd/v3.6.16.json. */
  file: string;
}

/** Where each etcd version's map is: its etcd-only file, else a Kubernetes release's etcd.json of that version. */
function sources(): Map<string, string> {
  const out = new Map<string, string>();
  for (const v of flagVersions()) {
    if (!(mappedComponents(v) as string[]).includes('etcd')) continue;
    out.set(loadFlagMap('etcd', v).componentVersion, join(dataDir(v), 'etcd.json'));
  }
  if (existsSync(etcdDataDir())) {
    for (const f of readdirSync(etcdDataDir()).filter((n) => /^v\d+\.\d+\.\d+\.json$/.test(n)).sort()) out.set(f.slice(0, -'.json'.length), join(etcdDataDir(), f));
  }
  return out;
}

/** Every etcd version with a flag map, oldest first. */
export function etcdMapVersions(): string[] {
  const n = (v: string) => v.slice(1).split('.').map(Number);
  return [...sources().keys()].sort((a, b) => { const [x, y] = [n(a), n(b)]; return (x[0]! - y[0]!) || (x[1]! - y[1]!) || (x[2]! - y[2]!); });
}

const cache = new Map<string, FlagMap>();

/** etcd's flag map at one etcd version, or undefined when none is committed. */
export function findEtcdMap(version: string): EtcdMap | undefined {
  const file = sources().get(version);
  if (!file) return undefined;
  let map = cache.get(file);
  if (!map) {
    map = JSON.parse(readFileSync(file, 'utf8')) as FlagMap;
    if (map.component !== 'etcd' || map.componentVersion !== version) throw new Error(`${file} is not etcd ${version}'s flag map (${map.component} ${map.componentVersion})`);
    cache.set(file, map);
  }
  return { map, file: relative(repoRoot, file) };
}

/** The same, or one line on `field` naming the versions that have one and how to build another. */
export function loadEtcdMap(version: string, field = '--etcd'): EtcdMap {
  const hit = findEtcdMap(version);
  if (hit) return hit;
  throw new InputError(field, `etcd ${version} has no flag map (have: ${etcdMapVersions().join(', ')}); run "hardwire flags --regenerate --etcd ${version}" or name one of those`);
}
