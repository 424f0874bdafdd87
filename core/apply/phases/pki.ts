import type { Phase } from '../phase.ts';
import { ensurePki } from '../../pki/store.ts';

// Local operator state only; a dry run still needs it to compute the diff.
export const pkiPhase: Phase = {
  id: 'pki',
  title: 'Load or create the PKI',
  async run(ctx) {
    ctx.pki = await ensurePki(ctx.stateDir, ctx.inv);
    for (const e of ctx.pki.events.filter((e) => e.action !== 'kept'))
      ctx.log.info(
        `  ${e.action} ${e.file}${e.reasons.length ? ` (${e.reasons.join('; ')})` : ''}`,
      );
  },
};
