// What "started" means for a component under delve: the gate `flags prove` runs it to. Each gate is
// read before the unit stops (the Lease holder to tell the traced instance from the unit) and
// returns what it saw of the traced instance.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Inventory } from '../../core/inventory/load.ts';
import type { Session } from '../../core/transport/index.ts';
import type { KubeCreds } from '../../core/transport/kube-api.ts';
import { localHealthz } from '../../core/gates/local.ts';
import { readLease } from '../../core/gates/leases.ts';
import { checkEtcd } from '../../core/gates/etcd.ts';
import { StepError } from '../../lib/errors.ts';
import { DEBUG_PORT } from '../delve/beside.ts';
import { ETCD_CLIENT_PORT } from '../../lib/constants.ts';

/** Waits until the traced instance passes, or the signal aborts it; resolves to what proves it. */
export type GateWait = (signal: AbortSignal) => Promise<string>;
/** Reads what it needs before the unit stops; `argv`: what the traced instance runs with. */
export type ProveGate = (s: Session, timeoutMs: number, argv: string[]) => Promise<GateWait>;

async function poll(
  s: Session,
  what: string,
  timeoutMs: number,
  signal: AbortSignal,
  once: () => Promise<string | undefined>,
  why: () => string = () => '',
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (!signal.aborted) {
    if (Date.now() > deadline)
      throw new StepError(
        'flags prove',
        `${what} under delve did not pass its gate in ${timeoutMs / 1000}s${why()}`,
        { host: s.host.name },
      );
    const got = await once();
    if (got !== undefined) return got;
    await sleep(1000);
  }
  return '';
}

/**
 * Healthy on its port, and holding its Lease under a holder other than the stopped unit's, renewed
 * once. The holder must be this host's (leader election names itself `<hostname>_<uuid>`): on a
 * lab of several hosts another host's instance could take the Lease, and that proves nothing here
 * (prove stops the other hosts' instances meanwhile, harness/prove/others.ts).
 */
export function leaseGate(
  component: string,
  port: number,
  lease: string,
  creds: KubeCreds,
): ProveGate {
  return async (s, timeoutMs) => {
    const oldHolder = (await readLease(creds, lease).catch(() => undefined))?.holder ?? '';
    const ours = `${(await s.exec(['hostname'], { timeoutMs: 10_000 })).stdout.trim()}_`;
    return (signal) => {
      let renew = '';
      let other = '';
      return poll(
        s,
        component,
        timeoutMs,
        signal,
        async () => {
          const h = await localHealthz(s, port).catch(() => ({ status: 0, body: '' }));
          if (h.status !== 200 || h.body !== 'ok') return undefined;
          const l = await readLease(creds, lease).catch(() => undefined);
          if (!l || !l.holder || l.holder === oldHolder) return undefined;
          if (!l.holder.startsWith(ours)) {
            other = l.holder;
            return undefined;
          }
          if (renew && l.renewTime !== renew) return l.holder;
          renew = l.renewTime;
          return undefined;
        },
        () =>
          other || (oldHolder && !oldHolder.startsWith(ours))
            ? `: Lease ${lease} is held by ${other || oldHolder}, another host's instance, which prove stops on every other control-plane host of the inventory: is it running on a host the inventory does not list?`
            : '',
      );
    };
  };
}

/**
 * etcd: every member healthy over mTLS and the member list equal to the inventory, with the unit
 * stopped; the traced member asked where its run's --advertise-client-urls says (k0s's etcd serves
 * on 127.0.0.1 only), the others at their addresses.
 */
export function etcdProveGate(inv: Inventory): ProveGate {
  return async (s, timeoutMs, argv) => {
    const adv = argv
      .find((a) => a.startsWith('--advertise-client-urls='))
      ?.slice('--advertise-client-urls='.length)
      .split(',')[0];
    const endpoints = inv.etcdHosts.map((h) =>
      h.name === s.host.name && adv ? adv : `https://${h.address}:${ETCD_CLIENT_PORT}`,
    );
    return (signal) =>
      poll(s, 'etcd', timeoutMs, signal, async () => {
        const h = await checkEtcd(inv, s, endpoints).catch(() => undefined);
        return h ? `healthy: ${h.members.join(', ')}` : undefined;
      });
  };
}

/**
 * kube-apiserver beside the unit: /readyz ok on the debug instance's own port, which the unit does
 * not serve; asked as the admin identity, since flags may turn anonymous requests off (k0s's do).
 */
export function readyzGate(creds: KubeCreds): ProveGate {
  return async (s, timeoutMs) => (signal) =>
    poll(s, 'kube-apiserver', timeoutMs, signal, async () => {
      const h = await localHealthz(s, DEBUG_PORT, 5000, '/readyz', creds).catch(() => ({
        status: 0,
        body: '',
      }));
      return h.status === 200 && h.body === 'ok'
        ? `readyz ok on 127.0.0.1:${DEBUG_PORT}`
        : undefined;
    });
}
