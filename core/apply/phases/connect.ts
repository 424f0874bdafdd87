import type { Phase } from '../phase.ts';
import { connect, readOnly } from '../../transport/index.ts';
import { StepError } from '../../../lib/errors.ts';

const pending = new WeakMap<object, Promise<PromiseSettledResult<void>[]>>();

function connectAll(ctx: Parameters<Phase['run']>[0]): Promise<PromiseSettledResult<void>[]> {
  return Promise.allSettled(
    ctx.inv.hosts.map(async (h) => {
      const s = await connect(h, {
        ...(ctx.inv.knownHostsFile ? { knownHostsFile: ctx.inv.knownHostsFile } : {}),
        acceptNewHostKeys: ctx.opts.acceptNewHostKeys,
        timeoutMs: 10_000,
      });
      ctx.wet.attach(h.name, s);
      ctx.sessions.set(h.name, readOnly(s));
    }),
  );
}

// All hosts or none: a host that cannot be reached stops the run before anything changes.
export const connectPhase: Phase = {
  id: 'connect',
  title: 'Connect to every host over SSH (pinned host keys)',
  // The handshakes need nothing from the phases before this one, so they run while PKI and render do.
  early(ctx) {
    pending.set(ctx, connectAll(ctx));
  },
  async run(ctx) {
    const results = await (pending.get(ctx) ?? connectAll(ctx));
    const failed = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    if (failed.length > 0) {
      const first = failed[0];
      if (first instanceof StepError) {
        throw new StepError(
          first.step,
          `${first.message}${failed.length > 1 ? ` (and ${failed.length - 1} more host(s))` : ''}; nothing was changed on any host`,
          { ...(first.host ? { host: first.host } : {}), detail: first.detail },
        );
      }
      throw first;
    }
  },
  async cleanup(ctx) {
    await pending.get(ctx); // a run that failed before this phase still closes what early() opened
    await ctx.wet.closeAll();
  },
};
