// Running a debuggee under delve while other work goes on: continue, hand each stop to the caller,
// and halt once the work is done. trace apply records its sinks so; learn --live its tracepoints.
import type { DlvClient, DlvState } from './rpc.ts';

const HALT_MS = 60_000;

/**
 * Continues the debuggee while `work` runs, handing each stop to `onStop`, then halts it. Halting is
 * repeated until the loop, between two continues, sees that the work is done. Throws if the
 * debuggee exited; `alive` tells the work so, for it to stop waiting.
 */
export async function continueWhile<T>(
  c: DlvClient,
  work: (alive: () => boolean) => Promise<T>,
  onStop: (state: DlvState, raw: string) => Promise<void>,
): Promise<T> {
  let done = false;
  let exited: number | undefined;
  const loop = (async () => {
    while (!done) {
      const { state, raw } = await c.commandRaw('continue');
      if (state.exited) {
        exited = state.exitStatus;
        break;
      }
      await onStop(state, raw);
    }
  })().finally(() => {
    done = true;
  });
  let ended = false;
  void loop.then(
    () => {
      ended = true;
    },
    () => {
      ended = true;
    },
  );
  const result = await work(() => exited === undefined).finally(() => {
    done = true;
  });
  const haltBy = Date.now() + HALT_MS;
  while (!ended) {
    if (Date.now() > haltBy)
      throw new Error(`delve did not halt the debug kube-apiserver in ${HALT_MS / 1000}s`);
    await c.command('halt').catch(() => undefined);
    await Promise.race([loop.catch(() => undefined), new Promise((res) => setTimeout(res, 1000))]);
  }
  await loop;
  if (exited !== undefined)
    throw new Error(`the debug kube-apiserver exited with ${exited} under delve`);
  return result;
}
