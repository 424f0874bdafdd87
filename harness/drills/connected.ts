// The frame every drill runs in: one wire context, connected to every host of the inventory, and
// closed however the drill ends. Plus the two small helpers every drill module used to redefine.
import type { Inventory } from '../../core/inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import { clusterStateDir } from '../../core/pki/store.ts';
import { newContext, type WireContext } from '../../core/apply/context.ts';
import { connectPhase } from '../../core/apply/phases/connect.ts';

export const iso = (t: number | Date = Date.now()) => new Date(t).toISOString();
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How a drill connects: each gate's timeout, and whether an unknown host key is trusted on first contact (--accept-new-host-keys). */
export interface Connection {
  gateTimeoutMs: number;
  acceptNewHostKeys?: boolean | undefined;
}

export async function withConnected<T>(
  inv: Inventory,
  stateDir: string,
  conn: Connection,
  log: Logger,
  fn: (ctx: WireContext) => Promise<T>,
): Promise<T> {
  const ctx = newContext(
    inv,
    stateDir,
    clusterStateDir(stateDir, inv),
    {
      dryRun: false,
      acceptNewHostKeys: conn.acceptNewHostKeys === true,
      gateTimeoutMs: conn.gateTimeoutMs,
    },
    log,
  );
  await connectPhase.run(ctx);
  try {
    return await fn(ctx);
  } finally {
    await connectPhase.cleanup!(ctx);
  }
}
