import type { Phase } from '../../../apply/phase.ts';
import type { UpgradeRun } from '../state.ts';
import { runStep } from '../step.ts';
import { BIN } from '../../../components/models/types.ts';
import { statSync } from 'node:fs';

/**
 * The steps in order, one at a time: never two hosts' instances of a component down together, so
 * etcd keeps quorum and an apiserver stays ready. The first failed gate stops the roll. `exec` is
 * runStep; a test passes its own to watch the order.
 */
export function rollPhase(run: UpgradeRun, exec: typeof runStep = runStep): Phase {
  return {
    id: 'roll',
    title: 'Roll: each step writes its files, restarts and gates, one host at a time',
    shouldRun: () => run.steps.length > 0,
    async run(ctx) {
      const hopFile = (version: string, path: string) => {
        const file = run.hops.get(version)!.get(path.slice(BIN.length + 1))!.path;
        return { file, size: statSync(file).size };
      };
      for (const [i, step] of run.steps.entries()) {
        const t0 = performance.now();
        ctx.log.info(
          `  step ${i + 1}/${run.steps.length}: [${step.host}] ${step.restart.join(' + ')} → ${step.version}`,
        );
        await exec(ctx, step, i + 1, { hopFile });
        run.done.push({
          host: step.host,
          restart: step.restart,
          version: step.version,
          seconds: Math.round(performance.now() - t0) / 1000,
        });
      }
    },
  };
}
