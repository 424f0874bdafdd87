// `flags prove` past the gate (kube-apiserver): SIGTERM to the debuggee, the tracepoints kept until
// it exits, and the sites first hit then marked as its shutdown's. A scripted delve stands in for
// the real one (the lab test, test/flags-prove.test.ts, runs the real thing): its tracepoint stops
// are the ones kube-apiserver's map cites for --shutdown-watch-termination-grace-period.
import { describe, expect, it } from 'vitest';
import type { DlvClient, DlvState } from '../harness/delve/rpc.ts';
import { traceUntil, type SiteTrace, type Traced } from '../harness/prove/trace.ts';
import { planFlags } from '../harness/prove/sites.ts';
import { loadFlagMap } from '../core/flags/map.ts';
import { classify } from '../harness/prove/classify.ts';

const PID = 4242;
const plans = planFlags(loadFlagMap('kube-apiserver'), [
  '--shutdown-watch-termination-grace-period=5s',
]);
const sites = plans[0]!.sites;

function traced(): Traced {
  const traces: SiteTrace[] = sites.map((site) => ({ site, hits: 0, capped: false, values: [] }));
  return {
    traces,
    byId: new Map(traces.map((t, i) => [i + 1, [t]])),
    siteVar: new Set(),
    guards: new Map(),
    guardsById: new Map(),
  };
}

const stopAt = (id: number): DlvState => ({
  Pid: PID,
  Running: false,
  exited: false,
  exitStatus: 0,
  Threads: [
    {
      id: 1,
      file: sites[id - 1]!.file,
      line: sites[id - 1]!.site.line,
      goroutineID: 7,
      function: { name: 'k8s.io/apiserver/pkg/server.(*GenericAPIServer).RunWithContext.func3' },
      breakPoint: { id, file: '', line: 0 },
    },
  ],
});

/** Delve as prove drives it: `before` stops until the gate, then (once SIGTERM is sent) `after` and the exit. */
function scripted(
  before: number[],
  after: number[],
  exitStatus: number | undefined,
): { client: DlvClient; signalled: number[]; gateOpen: Promise<void> } {
  const signalled: number[] = [];
  let wake: () => void = () => undefined;
  let halted = false;
  let open: () => void = () => undefined;
  const gateOpen = new Promise<void>((res) => {
    open = res;
  });
  const queue = [...before];
  const client = {
    async command(name: 'continue' | 'halt'): Promise<DlvState> {
      if (name === 'halt') {
        halted = true;
        wake();
        return { Pid: PID, Running: false, exited: false, exitStatus: 0, Threads: [] };
      }
      await new Promise((res) => setTimeout(res, 5));
      const next = queue.shift();
      if (next !== undefined) return stopAt(next);
      if (signalled.length && exitStatus !== undefined)
        return { Pid: PID, Running: false, exited: true, exitStatus, Threads: [] };
      open();
      if (!halted && !signalled.length)
        await new Promise<void>((res) => {
          wake = res;
        });
      if (halted) {
        halted = false;
        return { Pid: PID, Running: false, exited: false, exitStatus: 0, Threads: [] };
      }
      return this.command('continue');
    },
    async clear() {
      /* a capped tracepoint */
    },
    async breakpoints() {
      return [];
    },
  };
  const kill = (pid: number) => {
    signalled.push(pid);
    queue.push(...after);
    wake();
  };
  return { client: Object.assign(client, { kill }) as unknown as DlvClient, signalled, gateOpen };
}

describe('flags prove: SIGTERM past the gate', () => {
  it('sends SIGTERM to the pid delve reports, keeps tracing until the exit, and marks the sites first hit then', async () => {
    // The map's order: genericapiserver.go:699, config.go:846, :687, :689, config.go:1093, :681, server_run_options.go:162, :133.
    expect(sites.map((x) => x.site.line)).toEqual([699, 846, 687, 689, 1093, 681, 162, 133]);
    const { client, signalled, gateOpen } = scripted([2, 5, 7, 8], [2, 6, 3, 4, 1], 0);
    const t = traced();
    const out = await traceUntil(
      client,
      t,
      () => gateOpen,
      async (pid) => {
        (client as unknown as { kill(p: number): void }).kill(pid);
      },
    );
    expect(signalled).toEqual([PID]);
    expect(out.exited).toBeUndefined();
    expect(out.shutdown).toMatchObject({ signal: 'SIGTERM', exitStatus: 0 });
    expect(t.traces.map((x) => [x.gateHits, x.hits])).toEqual([
      [0, 1],
      [1, 2],
      [0, 1],
      [0, 1],
      [1, 1],
      [0, 1],
      [1, 1],
      [1, 1],
    ]);
    const [flag] = classify(plans, t.traces);
    expect(flag!.verdict).toBe('hit');
    const late = flag!.sites.filter((s) => s.atShutdown).map((s) => s.ref.replace(/^.*\//, ''));
    expect(late).toEqual([
      'genericapiserver.go:699',
      'genericapiserver.go:687',
      'genericapiserver.go:689',
      'genericapiserver.go:681',
    ]);
    expect(flag!.sites.every((s) => s.status === 'hit')).toBe(true);
  });

  it('leaves no timer behind once the debuggee has exited (a pending shutdown timer kept the CLI alive 120 s)', async () => {
    // Only the timers trace.ts itself sets are counted: the worker's own (vitest's RPC) come and go under load.
    const pending = new Set<unknown>();
    const realSet = globalThis.setTimeout;
    const realClear = globalThis.clearTimeout;
    const ours = () => (new Error().stack ?? '').includes('harness/prove/trace.ts');
    globalThis.setTimeout = ((fn: (...a: unknown[]) => void, ms?: number, ...a: unknown[]) => {
      if (!ours()) return realSet(fn, ms, ...a);
      const h: NodeJS.Timeout = realSet(
        (...b: unknown[]) => {
          pending.delete(h);
          fn(...b);
        },
        ms,
        ...a,
      );
      pending.add(h);
      return h;
    }) as typeof setTimeout;
    globalThis.clearTimeout = ((h?: NodeJS.Timeout) => {
      pending.delete(h);
      realClear(h);
    }) as typeof clearTimeout;
    try {
      const { client, gateOpen } = scripted([2, 5, 7, 8], [2, 6, 3, 4, 1], 0);
      const out = await traceUntil(
        client,
        traced(),
        () => gateOpen,
        async (pid) => {
          (client as unknown as { kill(p: number): void }).kill(pid);
        },
      );
      expect(out.shutdown).toMatchObject({ exitStatus: 0 });
      expect(pending.size).toBe(0);
    } finally {
      globalThis.setTimeout = realSet;
      globalThis.clearTimeout = realClear;
    }
  });

  it('without a stop, halts at the gate as before: no SIGTERM, no shutdown, no site marked', async () => {
    const { client, signalled, gateOpen } = scripted([2, 5, 7, 8], [1], 0);
    const t = traced();
    const out = await traceUntil(client, t, () => gateOpen);
    expect(signalled).toEqual([]);
    expect(out.shutdown).toBeUndefined();
    expect(t.traces.map((x) => x.gateHits)).toEqual(sites.map(() => undefined));
    expect(t.traces.map((x) => x.hits)).toEqual([0, 1, 0, 0, 1, 0, 1, 1]);
    const [flag] = classify(plans, t.traces);
    expect(flag!.sites.some((s) => s.atShutdown)).toBe(false);
    // A miss says the site was not reached before the gate, and nothing of a shutdown that did not happen.
    expect(flag!.sites[0]!.reason).toMatch(/before the gate passed/);
    expect(flag!.sites[0]!.reason).not.toMatch(/shutdown/);
  });

  it('a debuggee that does not exit is halted, and its shutdown has no exit status', async () => {
    const { client, gateOpen } = scripted([1], [2], undefined);
    const t = traced();
    const out = await traceUntil(
      client,
      t,
      () => gateOpen,
      async (pid) => {
        (client as unknown as { kill(p: number): void }).kill(pid);
      },
      50,
    );
    expect(out.shutdown?.exitStatus).toBeUndefined();
    expect(out.shutdown?.signal).toBe('SIGTERM');
    expect(t.traces[1]!.hits).toBe(1);
  });
});
