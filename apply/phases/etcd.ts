import type { Phase } from '../phase.ts';
import { roll } from '../roll.ts';
import { session } from '../context.ts';
import { etcdGate } from '../../gates/etcd.ts';

export const etcdPhase: Phase = {
  id: 'etcd',
  title: 'Start etcd and wait for a healthy cluster (mTLS, member list = inventory)',
  shouldRun: (ctx) => !ctx.opts.dryRun,
  async run(ctx) {
    const via = ctx.inv.etcdHosts[0]!.name;
    await roll(ctx, 'etcd', async () => {
      const h = await etcdGate(ctx.inv, session(ctx, via), ctx.sessions, ctx.opts.gateTimeoutMs);
      ctx.log.info(`  etcd healthy: ${h.members.join(', ')}`);
    });
  },
};
