// k0sctl's model: apply is a plain, ordered list of phases, each with a title and a run step,
// plus optional prepare, shouldRun and cleanup.
import type { WireContext } from './context.ts';

export interface Phase {
  title: string;
  /** Key for durationsMs in --json output. */
  id: string;
  prepare?(ctx: WireContext): Promise<void>;
  /** Started when the run starts, before any phase runs (work that depends on nothing before it); run() awaits it. */
  early?(ctx: WireContext): void;
  shouldRun?(ctx: WireContext): boolean;
  run(ctx: WireContext): Promise<void>;
  cleanup?(ctx: WireContext): Promise<void>;
}

export async function runPhases(phases: readonly Phase[], ctx: WireContext): Promise<void> {
  const ran: Phase[] = phases.filter((p) => p.early);
  for (const p of ran) p.early!(ctx);
  try {
    for (const p of phases) {
      if (p.shouldRun && !p.shouldRun(ctx)) continue;
      const t0 = performance.now();
      ctx.log.step(p.title);
      if (!ran.includes(p)) ran.push(p);
      await p.prepare?.(ctx);
      await p.run(ctx);
      ctx.durationsMs[p.id] = Math.round(performance.now() - t0);
    }
  } finally {
    for (const p of ran.reverse()) await p.cleanup?.(ctx).catch(() => undefined);
  }
}
