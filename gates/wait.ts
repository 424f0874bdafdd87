/** How often gates poll: a fraction of a Lease's 2 s renew interval, so a change is seen soon after it is made. */
export const POLL_MS = 250;
/** Checks that are one HTTPS GET on a kept-alive connection (/readyz, a Lease) cost little: polled more often, each start is seen sooner. */
export const API_POLL_MS = 100;

// Polls a check until it passes or the deadline passes; the last failure explains the timeout.
export async function waitUntil<T>(check: () => Promise<T>, timeoutMs: number, intervalMs = 1000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      last = err;
    }
    if (Date.now() + intervalMs > deadline) break;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw last instanceof Error ? last : new Error(String(last));
}
