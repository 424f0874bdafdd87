import type { Phase } from '../../../apply/phase.ts';
import { session } from '../../../apply/context.ts';
import type { UpgradeRun } from '../state.ts';
import { saveSnapshot } from '../../../apply/etcd-snapshot.ts';
import { etcdGate } from '../../../gates/etcd.ts';
import { StepError } from '../../../../lib/errors.ts';

/**
 * A verified snapshot before the first step, whatever the step: an upgrade does not start on an
 * unhealthy etcd. Verified with the target's etcdutl, which reads the snapshot of a member at
 * either end of the hops (a resumed run's etcd may be 3.7 already).
 */
export function upgradeSnapshotPhase(run: UpgradeRun): Phase {
  return {
    id: 'snapshot',
    title: 'Snapshot etcd before the first step (verified with etcdutl, copied to the operator)',
    shouldRun: () => run.steps.length > 0,
    async run(ctx) {
      const host = ctx.inv.etcdHosts[0]!;
      if (ctx.opts.dryRun) {
        await ctx.wet.run(
          host.name,
          'etcdctl snapshot save, copied to the operator (before the first step)',
          async () => undefined,
        );
        return;
      }
      await etcdGate(ctx.inv, session(ctx, host.name), ctx.sessions, ctx.opts.gateTimeoutMs);
      try {
        ctx.snapshot = await saveSnapshot(
          ctx.inv,
          host,
          session(ctx, host.name),
          ctx.wet,
          ctx.clusterDir,
          `${ctx.runId}-upgrade`,
          ctx.binaries.get('etcdutl')?.path,
        );
      } catch (err) {
        throw new StepError(
          'etcd snapshot',
          `could not take a verified snapshot before the upgrade: ${err instanceof Error ? err.message : String(err)}; nothing was changed`,
          { host: host.name },
        );
      }
      ctx.log.info(
        `  snapshot ${ctx.snapshot.file}: revision ${ctx.snapshot.revision}, ${ctx.snapshot.totalKey} keys, from ${host.name}`,
      );
    },
  };
}
