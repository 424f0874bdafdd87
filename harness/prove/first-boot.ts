// etcd's first boot under delve (issue 25): the reads a restart of an existing member never takes
// (PeerURLsMapAndToken, --initial-cluster-token) run only when the data dir has no WAL. With one
// member, prove stops what uses etcd, moves the data dir aside (a rename: the same inode tree comes
// back byte for byte), lets the debug etcd bootstrap a new cluster in an empty one, and afterwards
// puts the data dir back and starts everything again. Every change is a Wet step with its undo.
//
// With several members it does not: a member that bootstraps again with an empty data dir next to
// members that kept theirs would vote and acknowledge entries it no longer has (raft's safety
// rests on a member never forgetting them), so the proof keeps the restart of the member.
//
// A host without a default route (lab hosts) gets one for the proof, as every real host has:
// etcd reads it at start (netutil.GetDefaultHost) and UpdateDefaultClusterFromName returns early
// without it. It goes through a bridge with no ports, so nothing sent on it can leave the host's
// network namespace (the lab kernel has no dummy driver; its bridge driver is loaded for the lab).
import type { Inventory, Host } from '../../core/inventory/load.ts';
import type { ReadSession } from '../../core/transport/read-only.ts';
import { ETCD_DATA_DIR, ETCD_USER } from '../../core/components/models/etcd.ts';
import { StepError } from '../../lib/errors.ts';
import type { PlanStep } from './others.ts';

/** Where the data dir waits during the proof: beside it, so the move is a rename on one file system. */
export const ASIDE = `${ETCD_DATA_DIR}.hardwire-prove`;
/** The link the proof's default route goes through. */
export const ROUTE_LINK = 'hwprove0';
/** What uses etcd (the apiserver) and what uses the apiserver on a control-plane host, stopped in this order. */
export const USERS = [
  'kube-scheduler.service',
  'kube-controller-manager.service',
  'kube-apiserver.service',
];

export interface FirstBootInput {
  etcdHost: string;
  /** The units of USERS active on each host before the proof: only those stop and start again. */
  active: { host: string; units: string[] }[];
  /** The etcd host's address, when it has no default route and gets one for the proof. */
  defaultRouteSrc?: string;
}

const unit = 'etcd.service';

/** The Wet steps of a first boot, in order, each with its undo; pure, so a unit test reads the plan. */
export function firstBootPlan(i: FirstBootInput): PlanStep[] {
  const h = i.etcdHost;
  const steps: PlanStep[] = [];
  for (const { host, units } of i.active) {
    for (const u of USERS.filter((x) => units.includes(x))) {
      steps.push({
        host,
        msg: `stop ${u} for etcd's first boot (it uses etcd, or the apiserver)`,
        argv: ['systemctl', 'stop', u],
        undo: {
          host,
          msg: `start ${u} again after etcd's first boot`,
          argv: ['systemctl', 'start', u],
        },
      });
    }
  }
  steps.push(
    {
      host: h,
      msg: `stop ${unit} for its first boot under delve`,
      argv: ['systemctl', 'stop', unit],
      undo: {
        host: h,
        msg: `start ${unit} again on its own data dir`,
        argv: ['systemctl', 'start', unit],
      },
    },
    {
      host: h,
      msg: `move ${ETCD_DATA_DIR} aside to ${ASIDE}`,
      argv: ['mv', '-T', '--', ETCD_DATA_DIR, ASIDE],
      // Only once the move was made: the dir removed here is the first boot's, and the aside one exists.
      undo: {
        host: h,
        msg: `put ${ETCD_DATA_DIR} back from ${ASIDE} (the first boot's data dir removed)`,
        argv: [
          'sh',
          '-c',
          `test -d ${ASIDE} && rm -rf -- ${ETCD_DATA_DIR} && mv -T -- ${ASIDE} ${ETCD_DATA_DIR}`,
        ],
      },
    },
    {
      host: h,
      msg: `create an empty ${ETCD_DATA_DIR} (${ETCD_USER}:${ETCD_USER}, 0700) for the first boot`,
      argv: ['install', '-d', '-m', '0700', '-o', ETCD_USER, '-g', ETCD_USER, ETCD_DATA_DIR],
    },
  );
  if (i.defaultRouteSrc !== undefined) {
    steps.push(
      {
        host: h,
        msg: `add link ${ROUTE_LINK} (a bridge with no ports: what is sent on it is dropped)`,
        argv: ['ip', 'link', 'add', ROUTE_LINK, 'type', 'bridge'],
        undo: {
          host: h,
          msg: `delete link ${ROUTE_LINK} and its default route`,
          argv: ['ip', 'link', 'del', ROUTE_LINK],
        },
      },
      {
        host: h,
        msg: `route default through ${ROUTE_LINK} from ${i.defaultRouteSrc} for the proof (etcd reads its default host at start)`,
        argv: [
          'sh',
          '-c',
          `ip link set dev ${ROUTE_LINK} addrgenmode none && ip link set dev ${ROUTE_LINK} up && ip route add default dev ${ROUTE_LINK} src ${i.defaultRouteSrc}`,
        ],
      },
    );
  }
  return steps;
}

/** True when /proc/net/route (its text) has an IPv4 default route. */
export function hasDefaultRoute(procNetRoute: string): boolean {
  return procNetRoute
    .split('\n')
    .slice(1)
    .some((l) => {
      const f = l.trim().split(/\s+/);
      return f[1] === '00000000' && f[7] === '00000000';
    });
}

/**
 * Reads what the plan needs, before any change: which of USERS run on each control-plane host, that
 * the data dir is there and nothing is aside from an earlier run, and whether the host has a
 * default route. Undefined, with the reason, where first boot is not done.
 */
export async function readFirstBoot(
  inv: Inventory,
  host: Host,
  read: (host: string) => ReadSession,
): Promise<{ plan?: PlanStep[]; why: string }> {
  if (inv.etcdHosts.length !== 1)
    return {
      why: `${inv.etcdHosts.length} etcd members: a member bootstrapping again next to members that kept their data would break raft's safety, so the member restarts on its data dir`,
    };
  const s = read(host.name);
  const test = async (argv: string[]) =>
    (await s.exec(['test', ...argv], { allowFail: true })).code === 0;
  if (!(await test(['-d', `${ETCD_DATA_DIR}/member`])))
    throw new StepError(
      'flags prove',
      `${ETCD_DATA_DIR}/member is missing: wire etcd first (prove moves the data dir aside for etcd's first boot and puts it back)`,
      { host: host.name },
    );
  if (await test(['-e', ASIDE]))
    throw new StepError(
      'flags prove',
      `${ASIDE} exists: an earlier prove did not put it back; with etcd stopped, move it back to ${ETCD_DATA_DIR} (or remove it) and run prove again`,
      { host: host.name },
    );
  const active: FirstBootInput['active'] = [];
  for (const h of inv.controlPlaneHosts) {
    const r = await read(h.name).exec(['systemctl', 'is-active', ...USERS], { allowFail: true });
    const states = r.stdout.trim().split('\n');
    active.push({ host: h.name, units: USERS.filter((_, n) => states[n] === 'active') });
  }
  const route = hasDefaultRoute((await s.exec(['cat', '/proc/net/route'])).stdout);
  // A worker's kubelet and kube-proxy keep running and could read the route: only where none runs.
  const src = !route && !host.isWorker ? host.address : undefined;
  const why = route
    ? 'the host has a default route'
    : host.isWorker
      ? 'no default route added: the host is a worker, whose kubelet and kube-proxy keep running'
      : `a default route through ${ROUTE_LINK} for the proof`;
  return {
    plan: firstBootPlan({ etcdHost: host.name, active, ...(src ? { defaultRouteSrc: src } : {}) }),
    why,
  };
}
