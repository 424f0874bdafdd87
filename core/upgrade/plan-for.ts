// The plan of `upgrade plan`, and what `upgrade apply` and compare's upgrade section refuse on: the
// inventory's passed flags and fields against the flag maps at both versions, the gates, the etcd
// hops and the order. Offline: the live checks are core/upgrade/live.ts.
import type { Inventory } from '../inventory/load.ts';
import { COMPONENT_NAMES } from '../components/registry/index.ts';
import {
  flagVersions,
  isFlagComponent,
  loadFlagMap,
  mappedComponents,
  type FlagMap,
} from '../flags/map.ts';
import { loadEtcdMap } from '../flags/etcd-maps.ts';
import { loadGateData, type GateData } from '../flags/gates.ts';
import { etcdVersions, versionsFor } from '../components/binaries/catalog.ts';
import { checkTarget } from './target.ts';
import { passedFields, passedFlags } from './passed.ts';
import { planUpgrade, type PassedFlag } from './plan.ts';
import type { PassedField } from './fields.ts';
import { etcdHopPlans, hopFlags, type EtcdMapLookup } from './etcd-flags.ts';
import { planDoc, type PlanDoc } from './format.ts';
import { planGates } from './gates.ts';
import { newAtTarget } from './new.ts';
import { etcdTarget } from './etcd-target.ts';
import { upgradeOrder } from './order.ts';

/** Maps with none committed that a plan may read: etcd's at a version, a running release's. */
export interface PlanOnDemand {
  etcd?: EtcdMapLookup;
  release?: ReleaseLookup;
}

/** A release's flag maps and gate tables, for the components a plan covers. */
export interface ReleaseMaps {
  map(component: string): FlagMap;
  gates: GateData;
}

/** A release's maps when every component has one (a half-written regeneration does not count), else undefined. */
export type ReleaseLookup = (
  version: string,
  components: readonly string[],
) => ReleaseMaps | undefined;

/** The committed maps, core/flags/data/<version>/. */
const committedRelease: ReleaseLookup = (version, components) => {
  const gates = loadGateData(version);
  const have: readonly string[] = mappedComponents(version);
  if (!gates || !components.every((c) => have.includes(c))) return undefined;
  return { map: (c) => loadFlagMap(c, version), gates };
};

function mapsAt(release: ReleaseMaps, components: readonly string[]): Record<string, FlagMap> {
  return Object.fromEntries(components.map((c) => [c, release.map(c)]));
}

/** Where each target's etcd comes from: kubeadm's DefaultEtcdVersion at that tag. */
const ETCD_PIN: Record<string, string> = {
  'v1.37.2':
    'k8s.io/kubernetes@v1.37.2/cmd/kubeadm/app/constants/constants.go:330 DefaultEtcdVersion = "3.7.0-0"',
};

/** etcd's map at each hop's versions; a version with none refuses the plan (exit 2, one line on --etcd-to). */
const committedEtcdMap: EtcdMapLookup = (version) => loadEtcdMap(version, '--etcd-to');

/** The plan of `upgrade plan`, and what `upgrade apply` refuses on: refusals (exit 2) thrown here. */
export function planFor(inv: Inventory, to: string, etcdTo?: string): PlanDoc {
  const from = inv.cluster.kubernetesVersion;
  return planFrom(
    { from, etcdFrom: versionsFor(from).etcd, passed: passedFlags(inv), fields: passedFields(inv) },
    to,
    etcdTo,
  );
}

/** What a plan starts from: the versions that run, and the flags and config fields each component passes. */
export interface PlanStart {
  from: string;
  etcdFrom: string;
  passed: Record<string, PassedFlag[]>;
  fields: Record<string, PassedField[]>;
}

/** The plan from flags however they were found: rendered for an inventory, or read from /proc (audit). */
export function planFrom(
  start: PlanStart,
  to: string,
  etcdTo?: string,
  /**
   * Maps a version has with none committed (audit: built on demand): etcd's, and the running
   * release's. The target's are always committed. Default: committed only.
   */
  onDemand: PlanOnDemand = {},
): PlanDoc {
  const { from, passed } = start;
  const etcdMapAt = onDemand.etcd ?? committedEtcdMap;
  // The components this inventory runs that have flag maps (containerd has none): a worker's
  // kubelet needs a map at both versions too.
  const planned = COMPONENT_NAMES.filter((c) => passed[c] && isFlagComponent(c));
  // Read once: an on-demand release loads each component's map from its cache.
  const fromRelease = committedRelease(from, planned) ?? onDemand.release?.(from, planned);
  const mapped = flagVersions().filter((v) => committedRelease(v, planned));
  checkTarget(from, to, fromRelease && !mapped.includes(from) ? [...mapped, from] : mapped);
  const [atFrom, atTo] = [fromRelease!, committedRelease(to, planned)!];
  // etcd's own versions: the one running now; --etcd, or the table's pairing for the target.
  const etcd = { from: start.etcdFrom, to: etcdTo ?? versionsFor(to).etcd };
  const hops = etcdTarget(etcd.from, etcd.to, etcdVersions());
  const runsEtcd = planned.includes('etcd');
  // One etcd table per hop (and gate table, if its unit sets gates), each against etcd's map at both ends (refused here if one has none).
  const etcdPlans = runsEtcd
    ? etcdHopPlans(etcd.from, hops, passed.etcd!, etcdMapAt)
    : { plans: [], gates: [] };
  const ordered = Object.fromEntries(planned.map((c) => [c, passed[c]!]));
  const only = (keep: (c: string) => boolean) =>
    Object.fromEntries(Object.entries(ordered).filter(([c]) => keep(c)));
  const fromMaps = mapsAt(atFrom, planned);
  const toMaps = {
    ...mapsAt(
      atTo,
      planned.filter((c) => c !== 'etcd'),
    ),
    ...(runsEtcd ? { etcd: etcdMapAt(etcd.to).map } : {}),
  };
  const versions = Object.fromEntries(
    planned.map((c): [string, [string, string]] => [
      c,
      c === 'etcd' ? [etcd.from, etcd.to] : [from, to],
    ]),
  );
  const kube = (c: string) => c !== 'etcd';
  return planDoc({
    from,
    to,
    components: [
      ...etcdPlans.plans,
      ...planUpgrade({ from: fromMaps, to: toMaps, passed: only(kube), fields: start.fields }),
    ],
    new: newAtTarget(fromMaps, toMaps, ordered),
    gates: [
      ...etcdPlans.gates,
      ...planGates({
        from: atFrom.gates,
        to: atTo.gates,
        passed: only(kube),
        versions,
      }),
    ],
    etcd: {
      ...etcd,
      toCite:
        etcd.to === versionsFor(to).etcd && ETCD_PIN[to] ? ETCD_PIN[to] : `--etcd-to ${etcd.to}`,
      hops: runsEtcd
        ? hopFlags(hops, etcdMapAt)
        : hops.map((h) => ({ ...h, flags: "no etcd on this inventory's hosts" })),
    },
    order: upgradeOrder(planned),
  });
}
