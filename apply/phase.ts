// k0sctl's model: apply is a plain, ordered list of phases, each with a title and a run step,
// plus optional prepare, shouldRun and cleanup.
import type { WireContext } from './context.ts';

export interface Phase {
  title: string;
  /** Key for durationsMs in --json output. */
  id: string;
  prepare?(ctx: WireContext): Promise<void>;
  shouldRun?(ctx: WireContext): boolean;
  run(ctx: WireContext): Promise<void>;
  cleanup?(ctx: WireContext): Promise<void>;
}

export async function runPhases(phases: readonly Phase[], ctx: WireContext): Promise<void> {
  const ran: Phase[] = [];
  try {
    for (const p of phases) {
      if (p.shouldRun && !p.shouldRun(ctx)) continue;
      const t0 = performance.now();
      ctx.log.step(p.title);
      ran.push(p);
      await p.prepare?.(ctx);
      await p.run(ctx);
      ctx.durationsMs[p.id] = Math.round(performance.now() - t0);
    }
  } finally {
    for (const p of ran.reverse()) await p.cleanup?.(ctx).catch(() => undefined);
  }
}
