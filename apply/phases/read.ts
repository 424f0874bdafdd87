import type { Phase } from '../phase.ts';
import { session } from '../context.ts';
import { readFacts } from '../facts.ts';

export const readPhase: Phase = {
  id: 'read',
  title: 'Read each host (file hashes, unit states)',
  async run(ctx) {
    await Promise.all(ctx.wants.map(async (w) => {
      ctx.facts.set(w.host, await readFacts(w.host, session(ctx, w.host), w.files.map((f) => f.path), w.components));
    }));
  },
};
