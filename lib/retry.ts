// The one way hardwire waits for something: a probe closure, retried at a fixed interval until it
// passes or time runs out. After k0sctl's pkg/retry and pkg/node/statusfunc.go: a probe resolves
// when what it looks for holds and throws why not otherwise; it throws abort(err) for a failure that
// waiting cannot fix, which ends the wait at once with err.
import { setTimeout as sleep } from 'node:timers/promises';

/** The sentinel a probe throws to stop retrying; retry() throws its reason. */
export class Abort extends Error {
  readonly reason: unknown;
  constructor(reason: unknown) {
    super('retrying aborted');
    this.reason = reason;
    this.name = 'Abort';
  }
}

/** Stop retrying and fail with `reason`: `throw abort(new StepError(...))`. */
export function abort(reason: unknown): Abort {
  return new Abort(reason);
}

/** For a step inside a probe whose failure is not "not yet" (a lost connection, say): it ends the wait with its error. */
export function orAbort<T>(p: Promise<T>): Promise<T> {
  return p.catch((err: unknown) => {
    throw abort(err);
  });
}

export interface RetryOptions<T> {
  timeoutMs: number;
  /** Pause between the end of one attempt and the start of the next. */
  intervalMs: number;
  /**
   * When time runs out, given the probe's last error: throw a better error (with a journal, say),
   * or return what was last seen. Default: throw the last error.
   */
  onTimeout?: (last: unknown) => T | Promise<T>;
  /**
   * Give up as soon as the next attempt would start after the deadline (the gates: their timeout is
   * a promise to the caller). Default: an attempt that fails after the deadline is the last.
   */
  startBeforeDeadline?: boolean;
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

/** Runs `probe` until it resolves; its value is returned. */
export async function retry<T>(probe: () => Promise<T>, o: RetryOptions<T>): Promise<T> {
  const deadline = Date.now() + o.timeoutMs;
  for (;;) {
    let last: unknown;
    try {
      return await probe();
    } catch (err) {
      if (err instanceof Abort) throw err.reason;
      last = err;
    }
    if (o.startBeforeDeadline ? Date.now() + o.intervalMs > deadline : Date.now() > deadline) {
      if (o.onTimeout) return o.onTimeout(last);
      throw asError(last);
    }
    await sleep(o.intervalMs);
  }
}

/** "Not yet", carrying what the probe saw: with `onTimeout: lastSeen`, a wait that runs out returns its last reading. */
export class Seen<T> extends Error {
  readonly value: T;
  constructor(value: T) {
    super('not yet');
    this.name = 'Seen';
    this.value = value;
  }
}

/** onTimeout for probes that throw Seen: the last reading; any other error is thrown as it is. */
export function lastSeen<T>(last: unknown): T {
  if (last instanceof Seen) return last.value as T;
  throw last;
}

const NOT_YET = new Error('not yet');

/** A predicate as a probe: whether it came to hold within `timeoutMs`, asked every `everyMs`. An error from it ends the wait. */
export async function waitFor(
  pred: () => boolean | Promise<boolean>,
  timeoutMs: number,
  everyMs = 50,
): Promise<boolean> {
  return retry(
    async () => {
      if (!(await orAbort(Promise.resolve().then(pred)))) throw NOT_YET;
      return true;
    },
    { timeoutMs, intervalMs: everyMs, onTimeout: () => false },
  );
}
