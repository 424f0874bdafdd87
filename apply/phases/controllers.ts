import type { Phase } from '../phase.ts';
import { roll } from '../roll.ts';
import { adminCreds } from '../creds.ts';
import { leaseGate } from '../../gates/leases.ts';
import { journalTail } from '../../gates/journal.ts';
import type { WireContext } from '../context.ts';
import type { ComponentName } from '../../components/models/index.ts';

async function rollWithLease(ctx: WireContext, component: ComponentName): Promise<void> {
  const creds = adminCreds(ctx.clusterDir);
  await roll(ctx, component, async (hosts) => {
    const l = await leaseGate(creds, component, ctx.opts.gateTimeoutMs, async () => {
      const host = hosts[0] ?? ctx.inv.controlPlaneHosts[0]!.name;
      const s = ctx.sessions.get(host);
      return { host, lines: s ? await journalTail(s, `${component}.service`) : [] };
    });
    ctx.log.info(`  ${component} Lease held by ${l.holder}, renewed ${l.renewTime}`);
  });
}

export const controllersPhase: Phase = {
  id: 'controllers',
  title: 'Start kube-controller-manager and kube-scheduler; wait for their leader Leases to renew',
  shouldRun: (ctx) => !ctx.opts.dryRun,
  async run(ctx) {
    await Promise.all([rollWithLease(ctx, 'kube-controller-manager'), rollWithLease(ctx, 'kube-scheduler')]);
  },
};
