// The one phase that starts or restarts components: one per registry stage (components with the same
// start order), each component rolled with its own gate. wire, certs renew --restart, rollback and
// etcd snapshot restore all end with these, in the registry's order.
import type { Phase } from '../phase.ts';
import { roll } from '../roll.ts';
import { STAGES, specOf, type Stage } from '../../components/registry/index.ts';

export function stagePhase(stage: Stage): Phase {
  const gates = stage.components.map((c) => `${c}: ${specOf(c).gate.proves}`).join('; ');
  return {
    id: stage.id,
    title: `Start or restart ${stage.components.join(' and ')} where the plan says; gate: ${gates}`,
    async run(ctx) {
      await Promise.all(stage.components.map((c) => roll(ctx, c)));
    },
  };
}

/** Every stage, in start order. */
export const START_PHASES: readonly Phase[] = STAGES.map(stagePhase);

/** The stages up to and including the one that starts `component`, and those after it. */
export function startPhasesSplitAfter(component: string): [Phase[], Phase[]] {
  const i = STAGES.findIndex((s) => s.components.some((c) => c === component));
  return [START_PHASES.slice(0, i + 1), START_PHASES.slice(i + 1)];
}

/** The stages before the one that starts `component`, and those from it on. */
export function startPhasesSplitBefore(component: string): [Phase[], Phase[]] {
  const i = STAGES.findIndex((s) => s.components.some((c) => c === component));
  return [START_PHASES.slice(0, i), START_PHASES.slice(i)];
}
