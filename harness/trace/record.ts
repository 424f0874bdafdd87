// The loop while kubectl runs: continue, and at each stop at a sink record the goroutine's stack
// and those of the goroutines that started it (while they hold apiserver frames: the HTTP
// server's accept loop above them is not this request's), then continue. When kubectl has
// exited, halt. delve's replies are kept verbatim in each hit.
import type { DlvClient, DlvFrame, DlvState } from '../delve/rpc.ts';
import type { Sink } from './sinks.ts';
import type { Frame, GoroutineStack, Hit } from './stages.ts';

export interface Kubectl {
  command: string;
  code: number;
  output: string;
}

const DEPTH = 200;
const ANCESTORS = 10;
const HALT_MS = 60_000;

const frames = (locs: DlvFrame[] | null): Frame[] =>
  (locs ?? [])
    .map((l) => ({ function: l.function?.name ?? '', file: l.file, line: l.line }))
    .reverse();

async function hitAt(
  c: DlvClient,
  sink: Sink,
  goroutine: number,
  fn: string,
  key: string | undefined,
  stop: string,
): Promise<Hit> {
  const own = await c.stacktrace(goroutine, DEPTH);
  const anc = await c.ancestors(goroutine, ANCESTORS);
  const stacks = [{ goroutine, reply: own.raw }];
  const chain: GoroutineStack[] = [{ goroutine, frames: frames(own.result.Locations) }];
  for (const a of anc.result.Ancestors ?? []) {
    if (a.Unreadable) break;
    const st = await c.stacktrace(a.ID, DEPTH).catch(() => undefined); // ended: nothing of this request above it
    if (!st) break;
    const fr = frames(st.result.Locations);
    if (!fr.some((f) => f.file.startsWith('k8s.io/'))) break;
    stacks.push({ goroutine: a.ID, reply: st.raw });
    chain.unshift({ goroutine: a.ID, frames: fr });
  }
  return {
    sink: sink.id,
    function: fn,
    goroutine,
    ...(key !== undefined ? { key } : {}),
    chain,
    raw: { stop, ancestors: anc.raw, stacks },
  };
}

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

export async function recordHits(
  c: DlvClient,
  byId: Map<number, Sink>,
  apply: () => Promise<Kubectl>,
): Promise<{ hits: Hit[]; kubectl: Kubectl }> {
  const hits: Hit[] = [];
  const kubectl = await continueWhile(c, apply, async (state, raw) => {
    for (const th of state.Threads ?? []) {
      const sink = th.breakPoint ? byId.get(th.breakPoint.id) : undefined;
      if (!sink) continue;
      const key = sink.key ? await c.evalString(th.goroutineID, sink.key) : undefined;
      hits.push(await hitAt(c, sink, th.goroutineID, th.function?.name ?? '', key, raw));
    }
  });
  return { hits, kubectl };
}
