// etcd's flag tables in an upgrade plan: one per hop (v3.6.8 → v3.6.16, v3.6.16 → v3.7.0), each
// flag the units pass looked up in etcd's own flag set at both ends of THAT hop, so a flag a middle
// release drops is caught at the member restart that would fail, not only at the last one.
import type { FlagMap } from '../../harness/flags/map.ts';
import type { Hop } from './etcd.ts';
import { planUpgrade, type ComponentPlan, type PassedFlag } from './plan.ts';

/** etcd's committed map at one etcd version, and the file it was read from (for the hop's line). */
export interface EtcdMapAt { map: FlagMap; file: string }

/** Throws (one line on --etcd) for a version with no map. */
export type EtcdMapLookup = (version: string) => EtcdMapAt;

/** [from, to] of each table: the hops, or the cluster's etcd against itself when there is none. */
function ends(from: string, hops: readonly Hop[]): [string, string][] {
  return hops.length > 0 ? hops.map((h) => [h.from, h.to]) : [[from, from]];
}

/**
 * One etcd plan per hop, in hop order. Every map is looked up before any row is made, so a hop
 * with no map refuses the whole plan.
 */
export function etcdHopPlans(from: string, hops: readonly Hop[], passed: PassedFlag[], mapAt: EtcdMapLookup): ComponentPlan[] {
  const pairs = ends(from, hops).map(([a, b]) => [mapAt(a).map, mapAt(b).map] as const);
  return pairs.map(([a, b]) => planUpgrade({ from: { etcd: a }, to: { etcd: b }, passed: { etcd: passed } })[0]!);
}

/** Each hop with the line that says where its etcd flags were checked: the map files at both ends. */
export function hopFlags(hops: readonly Hop[], mapAt: EtcdMapLookup): (Hop & { flags: string })[] {
  return hops.map((h) => ({ ...h, flags: `checked in ${mapAt(h.from).file} and ${mapAt(h.to).file} (the etcd ${h.from} → ${h.to} table)` }));
}
