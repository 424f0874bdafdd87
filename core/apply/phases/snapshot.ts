import type { Phase } from '../phase.ts';
import { session, type WireContext } from '../context.ts';
import { saveSnapshot } from '../etcd-snapshot.ts';
import { checkEtcd } from '../../gates/etcd.ts';
import { StepError } from '../../../lib/errors.ts';

/** Running etcd members, when this run will start or restart etcd somewhere. */
function membersAtRisk(ctx: WireContext): string[] {
  const plan = ctx.plan!;
  const touches = plan.hosts.some((h) =>
    h.units.some((u) => u.component === 'etcd' && u.action !== 'none'),
  );
  if (!touches) return [];
  return ctx.inv.etcdHosts
    .filter((h) => ctx.facts.get(h.name)?.units.get('etcd')?.activeState === 'active')
    .map((h) => h.name);
}

// Before etcd is restarted or reconfigured, take a verified snapshot from a healthy member.
export const snapshotPhase: Phase = {
  id: 'snapshot',
  title: 'Snapshot etcd before touching it',
  shouldRun: (ctx) => membersAtRisk(ctx).length > 0,
  async run(ctx) {
    const running = membersAtRisk(ctx);
    if (ctx.opts.dryRun) {
      await ctx.wet.run(
        running[0]!,
        'etcdctl snapshot save, copied to the operator (before etcd restarts)',
        async () => undefined,
      );
      return;
    }
    try {
      await checkEtcd(ctx.inv, session(ctx, running[0]!));
    } catch (err) {
      // A broken cluster is what the restart may be repairing: go on, but say there is no snapshot.
      ctx.snapshot = {
        skipped: `etcd not healthy before the change (${err instanceof Error ? err.message : String(err)})`,
      };
      ctx.log.warn(`no etcd snapshot: ${ctx.snapshot.skipped}`);
      return;
    }
    const host = ctx.inv.etcdHosts.find((h) => h.name === running[0])!;
    try {
      ctx.snapshot = await saveSnapshot(
        ctx.inv,
        host,
        session(ctx, host.name),
        ctx.wet,
        ctx.clusterDir,
        `${ctx.runId}-wire`,
      );
    } catch (err) {
      throw new StepError(
        'etcd snapshot',
        `could not take a verified snapshot before changing etcd: ${err instanceof Error ? err.message : String(err)}; nothing was changed`,
        { host: host.name },
      );
    }
    ctx.log.info(
      `  snapshot ${ctx.snapshot.file}: revision ${ctx.snapshot.revision}, ${ctx.snapshot.totalKey} keys, from ${host.name}`,
    );
  },
};
