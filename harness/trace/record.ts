// The loop while kubectl runs: continue, and at each stop at a sink record the goroutine's stack
// and those of the goroutines that started it (while they hold apiserver frames: the HTTP
// server's accept loop above them is not this request's), then continue. When kubectl has
// exited, halt. delve's replies are kept verbatim in each hit.
import type { DlvClient, DlvFrame } from '../delve/rpc.ts';
import { continueWhile } from '../delve/continue.ts';
import type { Sink } from './sinks.ts';
import type { Frame, GoroutineStack, Hit } from './stages.ts';

export interface Kubectl {
  command: string;
  code: number;
  output: string;
}

const DEPTH = 200;
const ANCESTORS = 10;

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
