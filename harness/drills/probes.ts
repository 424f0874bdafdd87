// Probes the drills share: what keeps working during a break (etcd, each apiserver's /readyz, the
// Leases), and what systemd knows about a unit (restarts, when its process started).
import { checkEtcd } from '../../core/gates/etcd.ts';
import { readLease } from '../../core/gates/leases.ts';
import { kubeRequest, withServer } from '../../core/transport/kube-api.ts';
import { LEASES } from '../../core/components/registry/index.ts';
import { APISERVER_PORT } from '../../lib/constants.ts';
import { showUnit } from '../../core/transport/systemctl.ts';
import type { ReadSession } from '../../core/transport/index.ts';
import type { DrillEnv } from './runner.ts';
import type { BlastItem } from './run-report.ts';
import { errText } from './symptoms.ts';

/** A Lease is alive if renewed within its duration (15 s, both controllers' default). */
export const LEASE_DURATION_MS = 15_000;

export async function readyzOn(
  env: DrillEnv,
  address: string,
): Promise<{ ok: boolean; detail: string }> {
  try {
    const r = await kubeRequest(
      withServer(env.creds, `https://${address}:${APISERVER_PORT}`),
      'GET',
      '/readyz',
      { timeoutMs: 3000 },
    );
    return { ok: r.status === 200, detail: `/readyz ${r.status}` };
  } catch (e) {
    return { ok: false, detail: `/readyz: ${errText(e)}` };
  }
}

export async function etcdHealth(env: DrillEnv): Promise<{ ok: boolean; detail: string }> {
  try {
    const h = await checkEtcd(env.inv, env.session(env.inv.etcdHosts[0]!.name));
    return { ok: true, detail: `${h.healthy.length}/${h.members.length} members healthy` };
  } catch (e) {
    return { ok: false, detail: errText(e) };
  }
}

/** Read through any apiserver that answers: a Lease is not down because one apiserver is. */
export async function leaseAlive(
  env: DrillEnv,
  lease: string,
): Promise<{ ok: boolean; detail: string }> {
  const errs: string[] = [];
  for (const h of env.inv.controlPlaneHosts) {
    try {
      const l = await readLease(
        withServer(env.creds, `https://${h.address}:${APISERVER_PORT}`),
        lease,
      );
      const ok = l.holder !== '' && l.ageMs <= LEASE_DURATION_MS;
      return {
        ok,
        detail: `held by ${l.holder || 'nobody'}, renewed ${Math.round(l.ageMs / 1000)} s ago (read via ${h.name})`,
      };
    } catch (e) {
      errs.push(`${h.name}: ${errText(e)}`);
    }
  }
  return { ok: false, detail: `cannot read: ${errs.join('; ')}` };
}

/** etcd, every apiserver's /readyz (as admin, at the host address) and every Lease, once. */
export async function blastRadius(env: DrillEnv): Promise<BlastItem[]> {
  const items: Promise<BlastItem>[] = [
    etcdHealth(env).then((r) => ({ what: 'etcd', ...r })),
    ...env.inv.controlPlaneHosts.map((h) =>
      readyzOn(env, h.address).then((r) => ({
        what: `kube-apiserver on ${h.name} (admin, https://${h.address}:${APISERVER_PORT})`,
        ...r,
      })),
    ),
    ...LEASES.map((l) =>
      leaseAlive(env, l.lease).then((r) => ({ what: `Lease kube-system/${l.lease}`, ...r })),
    ),
  ];
  return Promise.all(items);
}

export interface UnitState {
  activeState: string;
  nRestarts: number;
  mainPid: number;
  execMainStart: string;
}

/** systemd's view of a unit: NRestarts counts the restarts systemd itself made (Restart=). */
export async function unitState(s: ReadSession, unit: string): Promise<UnitState> {
  const kv = await showUnit(
    s,
    unit,
    ['ActiveState', 'NRestarts', 'MainPID', 'ExecMainStartTimestamp'],
    { allowFail: true, timeoutMs: 10_000 },
  );
  return {
    activeState: kv.ActiveState ?? '',
    nRestarts: Number(kv.NRestarts ?? NaN),
    mainPid: Number(kv.MainPID ?? 0),
    execMainStart: kv.ExecMainStartTimestamp ?? '',
  };
}
