// The gate of each kind of component, in the shape the registry asks for.
import { adminCreds } from '../../apply/creds.ts';
import { apiserverGate, checkApiserver } from '../../gates/apiserver.ts';
import { checkEtcd, etcdGate } from '../../gates/etcd.ts';
import { journalTail } from '../../gates/journal.ts';
import { checkLeaseRenewing, leaseGate, markLease, type LeaseMark } from '../../gates/leases.ts';
import { POLL_MS } from '../../gates/wait.ts';
import { localHealthz, unitState, type UnitState } from '../../gates/local.ts';
import { StepError } from '../../../lib/errors.ts';
import { abort, orAbort, retry } from '../../../lib/retry.ts';
import type { ReadSession as Session } from '../../transport/index.ts';
import type { Gate, GateContext } from './types.ts';
import { unitOf } from '../../../lib/unit.ts';
import { checkVip, vipGate } from '../../gates/vip.ts';
import { KUBE_VIP_LEASE } from '../models/kube-vip.ts';

function sessionOf(ctx: GateContext, host: string): Session {
  const s = ctx.sessions.get(host);
  if (!s) throw new Error(`no SSH session for ${host}`);
  return s;
}

/** etcd: asked from the first member, every member healthy and the member list equal to the inventory. */
export const etcdHealthGate: Gate = {
  proves: 'every member healthy over mTLS (healthcheck-client cert), member list = inventory',
  async wait(ctx) {
    const h = await etcdGate(
      ctx.inv,
      sessionOf(ctx, ctx.inv.etcdHosts[0]!.name),
      ctx.sessions,
      ctx.opts.gateTimeoutMs,
    );
    ctx.log.info(`  etcd healthy: ${h.members.join(', ')}`);
  },
  checks: (ctx) => [
    {
      name: 'etcd: members healthy over mTLS, member list = inventory',
      run: async () =>
        (await checkEtcd(ctx.inv, sessionOf(ctx, ctx.inv.etcdHosts[0]!.name))).members.join(', '),
    },
  ],
};

/** kube-apiserver: /livez and /readyz return 200 on each host, with the admin credentials. */
export const readyzGate: Gate = {
  proves: '/livez and /readyz return 200 with the admin credentials',
  async wait(ctx, hosts) {
    const creds = adminCreds(ctx.clusterDir);
    const targets = ctx.inv.controlPlaneHosts.filter(
      (h) => hosts.length === 0 || hosts.includes(h.name),
    );
    await Promise.all(
      targets.map((h) => apiserverGate(creds, h, ctx.sessions.get(h.name), ctx.opts.gateTimeoutMs)),
    );
    ctx.log.info(`  ready: ${targets.map((h) => h.name).join(', ')}`);
  },
  checks: (ctx) =>
    ctx.inv.controlPlaneHosts.map((h) => ({
      name: `kube-apiserver ${h.name}: /livez and /readyz`,
      run: async () => {
        await checkApiserver(adminCreds(ctx.clusterDir), h.address);
        return '200';
      },
    })),
};

/** One look at a host's instance: /healthz on its secure port and its unit's state, read together. */
async function look(
  s: Session,
  unit: string,
  port: number,
): Promise<{ h: { status: number; body: string }; now: UnitState }> {
  const [h, now] = await Promise.all([
    localHealthz(s, port).catch((err: unknown) => ({
      status: 0,
      body: err instanceof Error ? err.message : String(err),
    })),
    unitState(s, unit),
  ]);
  return { h, now };
}

/** Up for good: unit active, no restart since `before`, /healthz ok; else the StepError that says which. */
async function judge(
  ctx: GateContext,
  component: string,
  port: number,
  host: string,
  before: UnitState,
  seen: Awaited<ReturnType<typeof look>>,
): Promise<string> {
  const s = sessionOf(ctx, host);
  const unit = unitOf(component);
  const { h, now } = seen;
  const fail = async (msg: string) =>
    new StepError(`gate ${component}`, msg, { host, detail: await journalTail(s, unit) });
  if (now.active !== 'active') throw await fail(`${unit} is ${now.active} (${now.sub})`);
  if (now.nRestarts !== before.nRestarts)
    throw await fail(
      `systemd restarted ${unit} ${now.nRestarts - before.nRestarts} time(s) while the gate watched: it is crash-looping`,
    );
  if (h.status !== 200 || h.body !== 'ok')
    throw await fail(`/healthz on 127.0.0.1:${port} answered ${h.status} ${h.body.slice(0, 200)}`);
  return `active, NRestarts ${now.nRestarts}, /healthz ok`;
}

/** Proves one host's instance is up for good: unit active, no restart since `before`, /healthz ok. */
async function instanceHealthy(
  ctx: GateContext,
  component: string,
  port: number,
  host: string,
  before: UnitState,
): Promise<string> {
  return judge(
    ctx,
    component,
    port,
    host,
    before,
    await look(sessionOf(ctx, host), unitOf(component), port),
  );
}

/**
 * A controller exits when it loses its Lease (as it may while its local apiserver restarts), and
 * systemd starts it again: one restart while the gate watches is allowed, once the unit then stays
 * up and healthy for STABLE_MS (longer than RestartSec=5, so a unit that dies at start would have
 * restarted again). A second restart is a crash loop and fails at once.
 */
const STABLE_MS = 10_000;

async function settled(
  ctx: GateContext,
  component: string,
  port: number,
  host: string,
  before: UnitState,
): Promise<string> {
  const s = sessionOf(ctx, host);
  const unit = unitOf(component);
  let base = before;
  let restarts = 0;
  let stableFrom = Date.now();
  const unstable = new Error('not yet stable after a restart');
  return retry(
    async () => {
      // Each round trip reads the unit's restarts and its /healthz at once.
      const seen = await orAbort(look(s, unit, port));
      if (seen.now.nRestarts !== base.nRestarts) {
        restarts += seen.now.nRestarts - base.nRestarts;
        if (restarts > 1)
          throw abort(
            new StepError(
              `gate ${component}`,
              `systemd restarted ${unit} ${restarts} times while the gate watched: it is crash-looping`,
              { host, detail: await journalTail(s, unit) },
            ),
          );
        base = seen.now;
        stableFrom = Date.now();
      }
      if (Date.now() - stableFrom < (restarts > 0 ? STABLE_MS : 0)) throw unstable;
      return judge(ctx, component, port, host, base, seen);
    },
    {
      timeoutMs: ctx.opts.gateTimeoutMs,
      intervalMs: POLL_MS,
      startBeforeDeadline: true,
      onTimeout: async (last) => {
        throw last !== unstable
          ? last
          : new StepError(
              `gate ${component}`,
              `${unit} did not stay up for ${STABLE_MS / 1000}s after systemd restarted it`,
              { host, detail: await journalTail(s, unit) },
            );
      },
    },
  );
}

/**
 * A leader-elected controller. Its Lease in kube-system is held and renewing, which any one healthy
 * instance proves. So, on each of its hosts, the unit is also active, systemd did not restart it
 * while the gate watched, and its secure port answers /healthz: a standby crash-looping on another
 * host fails the gate.
 */
export function leaseRenewingGate(component: string, lease: string, securePort: number): Gate {
  const unit = unitOf(component);
  const hostsOf = (ctx: GateContext, hosts: string[]) =>
    ctx.inv.controlPlaneHosts
      .filter((h) => hosts.length === 0 || hosts.includes(h.name))
      .map((h) => h.name);
  return {
    proves: `its Lease kube-system/${lease} is held and renewing; on each host the unit is active, not restarted while watched, and /healthz on :${securePort} is ok`,
    arm: (ctx) => markLease(adminCreds(ctx.clusterDir), lease),
    async wait(ctx, hosts, armed) {
      const targets = hostsOf(ctx, hosts);
      const before = await Promise.all(targets.map((h) => unitState(sessionOf(ctx, h), unit)));
      const l = await leaseGate(
        adminCreds(ctx.clusterDir),
        lease,
        ctx.opts.gateTimeoutMs,
        async () => {
          const host = targets[0] ?? ctx.inv.controlPlaneHosts[0]!.name;
          const s = ctx.sessions.get(host);
          return { host, lines: s ? await journalTail(s, unit) : [] };
        },
        hosts.length === 0,
        armed as LeaseMark | undefined,
      ); // hosts is empty only when nothing was (re)started: see checkLeaseRenewing
      // /healthz can lag the Lease by a moment after a start; settled() retries it and allows one restart.
      await Promise.all(targets.map((h, i) => settled(ctx, component, securePort, h, before[i]!)));
      ctx.log.info(
        `  ${component} Lease held by ${l.holder}, renewed ${l.renewTime}; healthy on ${targets.join(', ')}`,
      );
    },
    checks: (ctx) => [
      {
        name: `${lease}: Lease held and renewing`,
        run: async () => {
          const l = await checkLeaseRenewing(adminCreds(ctx.clusterDir), lease);
          return `${l.holder} @ ${l.renewTime}`;
        },
      },
      ...ctx.inv.controlPlaneHosts.map((h) => ({
        name: `${component} ${h.name}: unit active, not restarting, /healthz ok`,
        run: async () => {
          const before = await unitState(sessionOf(ctx, h.name), unit);
          await new Promise((r) => setTimeout(r, 2000));
          return instanceHealthy(ctx, component, securePort, h.name, before);
        },
      })),
    ],
  };
}

/** kube-vip: its Lease held and renewing, the VIP on the holder alone, and the API answering at the VIP. */
export const kubeVipGate: Gate = {
  proves: `its Lease kube-system/${KUBE_VIP_LEASE} is held and renewing, the holder alone has the VIP on its interface, and /livez and /readyz answer at the VIP`,
  async wait(ctx) {
    // No VIP in the inventory: no host runs kube-vip, and there is nothing to gate.
    if (!ctx.inv.cluster.apiServerVip) return;
    const v = await vipGate(
      ctx.inv,
      adminCreds(ctx.clusterDir),
      ctx.sessions,
      KUBE_VIP_LEASE,
      ctx.opts.gateTimeoutMs,
    );
    ctx.log.info(
      `  ${v.address} held by ${v.holder} (Lease renewed ${v.renewTime}); the API answers there`,
    );
  },
  checks: (ctx) =>
    !ctx.inv.cluster.apiServerVip
      ? []
      : [
          {
            name: `kube-vip: ${KUBE_VIP_LEASE} held and renewing, the VIP on its holder alone, /livez and /readyz at the VIP`,
            run: async () => {
              const v = await checkVip(
                ctx.inv,
                adminCreds(ctx.clusterDir),
                ctx.sessions,
                KUBE_VIP_LEASE,
              );
              return `${v.address} on ${v.holder}`;
            },
          },
        ],
};
