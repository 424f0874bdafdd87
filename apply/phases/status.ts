import type { Phase } from '../phase.ts';
import { session } from '../context.ts';
import { unitFacts } from '../facts.ts';

// Reads the final unit states for the report (read-only).
export const statusPhase: Phase = {
  id: 'status',
  title: 'Read final unit states',
  shouldRun: (ctx) => !ctx.opts.dryRun,
  async run(ctx) {
    await Promise.all(ctx.wants.map(async (w) => {
      const units = await unitFacts(session(ctx, w.host), w.components);
      const facts = ctx.facts.get(w.host)!;
      ctx.facts.set(w.host, { ...facts, units });
    }));
  },
};
