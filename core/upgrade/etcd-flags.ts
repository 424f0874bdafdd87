// etcd's flag tables in an upgrade plan: one per hop (v3.6.8 → v3.6.16, v3.6.16 → v3.7.0), each
// flag the units pass looked up in etcd's own flag set at both ends of THAT hop, so a flag a middle
// release drops is caught at the member restart that would fail, not only at the last one. The
// gates in etcd's --feature-gates likewise, in etcd's gate table at both ends of each hop.
import type { FlagMap } from '../flags/map.ts';
import type { GateData } from './gate-data.ts';
import type { Hop } from './etcd.ts';
import { planGates, type GatePlan } from './gates.ts';
import { planUpgrade, type ComponentPlan, type PassedFlag } from './plan.ts';

/** etcd's committed map and gate table at one etcd version, and the map's file (for the hop's line). */
export interface EtcdMapAt {
  map: FlagMap;
  file: string;
  gates: GateData;
}

/** Throws (one line on --etcd-to) for a version with no map. */
export type EtcdMapLookup = (version: string) => EtcdMapAt;

/** [from, to] of each table: the hops, or the cluster's etcd against itself when there is none. */
function ends(from: string, hops: readonly Hop[]): [string, string][] {
  return hops.length > 0 ? hops.map((h) => [h.from, h.to]) : [[from, from]];
}

/**
 * One etcd plan per hop, in hop order, and the gate plan of each hop whose unit passes
 * --feature-gates (tagged with the hop's versions). Every map is looked up before any row is
 * made, so a hop with no map refuses the whole plan.
 */
export function etcdHopPlans(
  from: string,
  hops: readonly Hop[],
  passed: PassedFlag[],
  mapAt: EtcdMapLookup,
): { plans: ComponentPlan[]; gates: GatePlan[] } {
  const pairs = ends(from, hops).map(([a, b]) => [mapAt(a), mapAt(b)] as const);
  return {
    plans: pairs.map(
      ([a, b]) =>
        planUpgrade({ from: { etcd: a.map }, to: { etcd: b.map }, passed: { etcd: passed } })[0]!,
    ),
    gates: pairs.flatMap(([a, b]) =>
      planGates({
        from: a.gates,
        to: b.gates,
        passed: { etcd: passed },
        versions: { etcd: [a.map.componentVersion, b.map.componentVersion] },
      }).map((g) => ({
        ...g,
        fromVersion: a.map.componentVersion,
        toVersion: b.map.componentVersion,
      })),
    ),
  };
}

/** Each hop with the line that says where its etcd flags were checked: the map files at both ends. */
export function hopFlags(hops: readonly Hop[], mapAt: EtcdMapLookup): (Hop & { flags: string })[] {
  return hops.map((h) => ({
    ...h,
    flags: `checked in ${mapAt(h.from).file} and ${mapAt(h.to).file} (the etcd ${h.from} → ${h.to} table)`,
  }));
}
