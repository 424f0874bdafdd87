import type { Phase } from '../phase.ts';
import { session } from '../context.ts';
import { unitFacts } from '../facts.ts';

// Reads the final unit states for the report (read-only).
export const statusPhase: Phase = {
  id: 'status',
  title: 'Read final unit states',
  // Nothing (re)started: the unit states read before the plan are still current.
  shouldRun: (ctx) => !ctx.opts.dryRun && ctx.restarted.length > 0,
  async run(ctx) {
    await Promise.all(
      ctx.wants.map(async (w) => {
        const units = await unitFacts(session(ctx, w.host), w.components);
        const facts = ctx.facts.get(w.host)!;
        ctx.facts.set(w.host, { ...facts, units });
      }),
    );
  },
};
