import type { Phase } from '../../../apply/phase.ts';
import type { UpgradeRun } from '../state.ts';
import { recordHost } from '../../../apply/record.ts';

/** Each host's record of the target's files, once every step is done (a rolled-back host keeps its stale record, so the next run re-hashes). */
export function recordPhase(run: UpgradeRun): Phase {
  return {
    id: 'record',
    title: "Record the target's files on each host",
    shouldRun: () => run.steps.length > 0,
    async run(ctx) {
      await Promise.all(ctx.plan!.hosts.map((h) => recordHost(ctx, h.host)));
    },
  };
}
