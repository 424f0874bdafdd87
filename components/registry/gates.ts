// The gate of each kind of component, in the shape the registry asks for.
import { adminCreds } from '../../apply/creds.ts';
import { apiserverGate, checkApiserver } from '../../gates/apiserver.ts';
import { checkEtcd, etcdGate } from '../../gates/etcd.ts';
import { journalTail } from '../../gates/journal.ts';
import { checkLeaseRenewing, leaseGate } from '../../gates/leases.ts';
import type { ReadSession as Session } from '../../transport/index.ts';
import type { Gate, GateContext } from './types.ts';

function sessionOf(ctx: GateContext, host: string): Session {
  const s = ctx.sessions.get(host);
  if (!s) throw new Error(`no SSH session for ${host}`);
  return s;
}

/** etcd: asked from the first member, every member healthy and the member list equal to the inventory. */
export const etcdHealthGate: Gate = {
  proves: 'every member healthy over mTLS (healthcheck-client cert), member list = inventory',
  async wait(ctx) {
    const h = await etcdGate(ctx.inv, sessionOf(ctx, ctx.inv.etcdHosts[0]!.name), ctx.sessions, ctx.opts.gateTimeoutMs);
    ctx.log.info(`  etcd healthy: ${h.members.join(', ')}`);
  },
  checks: (ctx) => [{
    name: 'etcd: members healthy over mTLS, member list = inventory',
    run: async () => (await checkEtcd(ctx.inv, sessionOf(ctx, ctx.inv.etcdHosts[0]!.name))).members.join(', '),
  }],
};

/** kube-apiserver: /livez and /readyz return 200 on each host, with the admin credentials. */
export const readyzGate: Gate = {
  proves: '/livez and /readyz return 200 with the admin credentials',
  async wait(ctx, hosts) {
    const creds = adminCreds(ctx.clusterDir);
    const targets = ctx.inv.controlPlaneHosts.filter((h) => hosts.length === 0 || hosts.includes(h.name));
    await Promise.all(targets.map((h) => apiserverGate(creds, h, ctx.sessions.get(h.name), ctx.opts.gateTimeoutMs)));
    ctx.log.info(`  ready: ${targets.map((h) => h.name).join(', ')}`);
  },
  checks: (ctx) => ctx.inv.controlPlaneHosts.map((h) => ({
    name: `kube-apiserver ${h.name}: /livez and /readyz`,
    run: async () => { await checkApiserver(adminCreds(ctx.clusterDir), h.address); return '200'; },
  })),
};

/** A leader-elected controller: its Lease in kube-system is held and renewing. */
export function leaseRenewingGate(component: string, lease: string): Gate {
  return {
    proves: `its Lease kube-system/${lease} is held and renewing`,
    async wait(ctx, hosts) {
      const l = await leaseGate(adminCreds(ctx.clusterDir), lease, ctx.opts.gateTimeoutMs, async () => {
        const host = hosts[0] ?? ctx.inv.controlPlaneHosts[0]!.name;
        const s = ctx.sessions.get(host);
        return { host, lines: s ? await journalTail(s, `${component}.service`) : [] };
      });
      ctx.log.info(`  ${component} Lease held by ${l.holder}, renewed ${l.renewTime}`);
    },
    checks: (ctx) => [{
      name: `${lease}: Lease held and renewing`,
      run: async () => { const l = await checkLeaseRenewing(adminCreds(ctx.clusterDir), lease); return `${l.holder} @ ${l.renewTime}`; },
    }],
  };
}
