// A run that changes nothing still proves every component healthy, but its gates need not wait for
// one another: nothing is coming up, so every component's gate runs at once (after rbac, which the
// Lease gates read through). A run that starts or restarts anything gates stage by stage instead.
import type { Phase } from '../phase.ts';
import type { WireContext } from '../context.ts';
import { COMPONENT_NAMES, specOf } from '../../components/registry/index.ts';

export const isNoop = (ctx: WireContext): boolean => !ctx.opts.dryRun && ctx.plan!.noop;

/** A stage phase that a no-op run leaves to noopGatesPhase. */
export function unlessNoop(p: Phase): Phase {
  return { ...p, shouldRun: (ctx) => !isNoop(ctx) && (p.shouldRun?.(ctx) ?? true) };
}

export const noopGatesPhase: Phase = {
  id: 'gates',
  title: 'Nothing to start or restart: every gate at once',
  shouldRun: isNoop,
  async run(ctx) {
    await Promise.all(COMPONENT_NAMES.map((c) => specOf(c).gate.wait(ctx, [])));
  },
};
