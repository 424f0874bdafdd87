import type { Phase } from '../phase.ts';
import { buildPlan } from '../../plan/build.ts';
import { formatPlan } from '../../plan/format.ts';

export const planPhase: Phase = {
  id: 'plan',
  title: 'Plan',
  async run(ctx) {
    ctx.plan = buildPlan(ctx.wants, ctx.facts);
    for (const line of formatPlan(ctx.plan).trimEnd().split('\n')) ctx.log.info(`  ${line}`);
  },
};
