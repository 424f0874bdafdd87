// lib/retry.ts: the one deadline-and-poll loop, with its abort sentinel and both deadline rules.
import { describe, expect, it } from 'vitest';
import { abort, orAbort, retry, waitFor } from '../lib/retry.ts';

describe('lib/retry', () => {
  it("returns the probe's value once it passes", async () => {
    let n = 0;
    expect(
      await retry(
        async () => {
          if (++n < 3) throw new Error(`try ${n}`);
          return 'up';
        },
        { timeoutMs: 5000, intervalMs: 10 },
      ),
    ).toBe('up');
    expect(n).toBe(3);
  });

  it('abort() stops at once with its reason', async () => {
    let n = 0;
    const reason = new Error('crash-looping');
    await expect(
      retry(
        async () => {
          n++;
          throw abort(reason);
        },
        { timeoutMs: 5000, intervalMs: 10 },
      ),
    ).rejects.toBe(reason);
    expect(n).toBe(1);
  });

  it('out of time: the last error, or what onTimeout makes of it', async () => {
    let n = 0;
    const err = await retry(
      async () => {
        throw new Error(`try ${++n}`);
      },
      { timeoutMs: 50, intervalMs: 10 },
    ).catch((e: unknown) => e);
    expect((err as Error).message).toBe(`try ${n}`);
    expect(n).toBeGreaterThan(1);
    await expect(
      retry(
        async () => {
          throw new Error('nope');
        },
        {
          timeoutMs: 20,
          intervalMs: 5,
          onTimeout: (last) => `gave up: ${(last as Error).message}`,
        },
      ),
    ).resolves.toBe('gave up: nope');
  });

  it('startBeforeDeadline never starts an attempt past the deadline; the default lets one failing attempt end past it', async () => {
    const starts: number[] = [];
    const t0 = Date.now();
    // Wide margins (600 ms steps against a 1 s deadline), so a loaded machine does not change the count.
    await retry(
      async () => {
        starts.push(Date.now() - t0);
        throw new Error('x');
      },
      { timeoutMs: 1000, intervalMs: 600, startBeforeDeadline: true },
    ).catch(() => undefined);
    expect(starts.every((t) => t <= 1000)).toBe(true);
    expect(starts.length).toBe(2); // 0 and ~600; a third would start at ~1200
    const loose: number[] = [];
    const t1 = Date.now();
    await retry(
      async () => {
        loose.push(Date.now() - t1);
        throw new Error('x');
      },
      { timeoutMs: 1000, intervalMs: 600 },
    ).catch(() => undefined);
    expect(loose.length).toBe(3); // 0, ~600, ~1200: the attempt at ~1200 fails past the deadline and is the last
  });

  it('waitFor: whether a predicate came to hold in time', async () => {
    let n = 0;
    expect(await waitFor(() => ++n >= 3, 5000, 5)).toBe(true);
    expect(await waitFor(() => false, 30, 5)).toBe(false);
    // An error is not "not yet": it ends the wait.
    await expect(
      waitFor(
        () => {
          throw new Error('gone');
        },
        5000,
        5,
      ),
    ).rejects.toThrow('gone');
  });

  it('orAbort: a failing step inside a probe ends the wait with its error', async () => {
    let n = 0;
    await expect(
      retry(
        async () => {
          n++;
          await orAbort(Promise.reject(new Error('connection lost')));
        },
        { timeoutMs: 5000, intervalMs: 5 },
      ),
    ).rejects.toThrow('connection lost');
    expect(n).toBe(1);
  });
});
