import type { Phase } from '../phase.ts';
import { connect, readOnly } from '../../transport/index.ts';
import { StepError } from '../../lib/errors.ts';

// All hosts or none: a host that cannot be reached stops the run before anything changes.
export const connectPhase: Phase = {
  id: 'connect',
  title: 'Connect to every host over SSH (pinned host keys)',
  async run(ctx) {
    const results = await Promise.allSettled(ctx.inv.hosts.map(async (h) => {
      const s = await connect(h, {
        ...(ctx.inv.knownHostsFile ? { knownHostsFile: ctx.inv.knownHostsFile } : {}),
        acceptNewHostKeys: ctx.opts.acceptNewHostKeys,
        timeoutMs: 10_000,
      });
      ctx.wet.attach(h.name, s);
      ctx.sessions.set(h.name, readOnly(s));
    }));
    const failed = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    if (failed.length > 0) {
      const first = failed[0];
      if (first instanceof StepError) {
        throw new StepError(first.step, `${first.message}${failed.length > 1 ? ` (and ${failed.length - 1} more host(s))` : ''}; nothing was changed on any host`, { ...(first.host ? { host: first.host } : {}), detail: first.detail });
      }
      throw first;
    }
  },
  async cleanup(ctx) {
    await ctx.wet.closeAll();
  },
};
