// kube-vip's gate: its Lease is held and renewing, the holder alone has the VIP on its interface,
// and kube-apiserver answers /livez and /readyz at the VIP.
import { StepError } from '../../lib/errors.ts';
import { APISERVER_PORT } from '../../lib/constants.ts';
import { retry } from '../../lib/retry.ts';
import { withServer, type KubeCreds } from '../transport/kube-api.ts';
import type { ReadSession } from '../transport/index.ts';
import type { Inventory } from '../inventory/load.ts';
import { checkApiserver } from './apiserver.ts';
import { checkLeaseRenewing } from './leases.ts';
import { journalTail } from './journal.ts';
import { API_POLL_MS } from './wait.ts';

export interface VipState {
  address: string;
  holder: string;
  renewTime: string;
}

/** Hosts (of those with a session) whose interface has the address now. */
export async function vipHolders(
  inv: Inventory,
  sessions: ReadonlyMap<string, ReadSession>,
): Promise<string[]> {
  const vip = inv.cluster.apiServerVip!;
  const held = await Promise.all(
    inv.controlPlaneHosts.map(async (h) => {
      const s = sessions.get(h.name);
      if (!s) return false;
      const r = await s.exec(['ip', '-o', '-4', 'addr', 'show', 'dev', vip.interface]);
      return r.stdout.split('\n').some((l) => l.includes(` ${vip.address}/`));
    }),
  );
  return inv.controlPlaneHosts.filter((_, i) => held[i]).map((h) => h.name);
}

/** One look: the Lease read through a host's own address, the address on its holder alone, the API at the VIP. */
export async function checkVip(
  inv: Inventory,
  creds: KubeCreds,
  sessions: ReadonlyMap<string, ReadSession>,
  lease: string,
): Promise<VipState> {
  const vip = inv.cluster.apiServerVip!;
  const l = await leaseThroughHosts(inv, creds, lease);
  const holders = await vipHolders(inv, sessions);
  if (holders.length !== 1 || holders[0] !== l.holder)
    throw new Error(
      `Lease kube-system/${lease} is held by ${l.holder}, but ${vip.address} is on ${holders.length ? holders.join(', ') : 'no host'}`,
    );
  await checkApiserver(creds, vip.address);
  return { address: vip.address, holder: l.holder, renewTime: l.renewTime };
}

/** The Lease, read through each control-plane host's own address in turn (not through the VIP under test). */
async function leaseThroughHosts(inv: Inventory, creds: KubeCreds, lease: string) {
  let last: unknown;
  for (const h of inv.controlPlaneHosts) {
    try {
      return await checkLeaseRenewing(
        withServer(creds, `https://${h.address}:${APISERVER_PORT}`),
        lease,
      );
    } catch (err) {
      last = err;
    }
  }
  throw last;
}

export async function vipGate(
  inv: Inventory,
  creds: KubeCreds,
  sessions: ReadonlyMap<string, ReadSession>,
  lease: string,
  timeoutMs: number,
): Promise<VipState> {
  try {
    return await retry(() => checkVip(inv, creds, sessions, lease), {
      timeoutMs,
      intervalMs: API_POLL_MS,
      startBeforeDeadline: true,
    });
  } catch (err) {
    const first = inv.controlPlaneHosts.find((h) => sessions.has(h.name));
    const detail = first ? await journalTail(sessions.get(first.name)!, 'kube-vip') : [];
    throw new StepError(
      'gate kube-vip',
      `${inv.cluster.apiServerVip!.address} not serving after ${timeoutMs / 1000}s: ${err instanceof Error ? err.message : String(err)}`,
      { host: first?.name, detail },
    );
  }
}
