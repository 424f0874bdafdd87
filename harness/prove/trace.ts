// The tracing loop: one tracepoint per cited read site, continue until the gate passes, then halt
// and read the hit counts. Delve stops at a tracepoint and hands the stop to the client (as its own
// `trace` command does), so the loop continues after each one.
import type { DlvBreakpoint, DlvClient, DlvState, DlvVariable } from './dlv-rpc.ts';
import type { TraceSite } from './sites.ts';

/** After this many hits a tracepoint is cleared, so a hot loop does not slow the component into losing its Lease. */
export const HIT_CAP = 20;
const HALT_MS = 30_000;

export interface SiteHit {
  /** Where delve stopped, and the function it named. */
  file: string; line: number; function: string; goroutine: number;
  variable?: DlvVariable;
}

/** Why a line got no tracepoint: delve's message, and whether the cited function is in the binary at all. */
export interface Unset { message: string; linked: boolean }

export interface SiteTrace {
  site: TraceSite;
  /** Why no tracepoint could be set, e.g. no statement at that line because the function was not linked. */
  unset?: Unset;
  /** The tracepoint's address count: more than one when the line compiles into several places. */
  addrs?: number;
  hits: number;
  /** Hits when the gate passed; set only when the run then stops the debuggee (hits past it come from its shutdown). */
  gateHits?: number;
  capped: boolean;
  first?: SiteHit;
  /** The value read at each hit, up to HIT_CAP: a generated conversion of the defaults reads before the flag applies. */
  values: DlvVariable[];
}

/** The debuggee stopped after its gate: the signal sent, its exit status (undefined: it did not exit in time), and how long it took. */
export interface Shutdown { signal: 'SIGTERM'; exitStatus?: number; seconds: number }

export interface TraceOutcome { traces: SiteTrace[]; exited?: number; shutdown?: Shutdown; seconds: number }

/** How long a debuggee sent SIGTERM after its gate may take to exit before it is halted. */
export const SHUTDOWN_MS = 120_000;

/** Tracepoints by delve id; a line cited for several flags (shared client-go code) has one tracepoint. */
export interface Traced { traces: SiteTrace[]; byId: Map<number, SiteTrace[]> }

export async function setTracepoints(c: DlvClient, sites: TraceSite[]): Promise<Traced> {
  const traces: SiteTrace[] = [];
  const byId = new Map<number, SiteTrace[]>();
  const byLine = new Map<string, { id?: number; unset?: Unset; addrs?: number }>();
  for (const site of sites) {
    const key = `${site.file}:${site.site.line}`;
    let bp = byLine.get(key);
    if (!bp) {
      try {
        const b = await c.trace(site.file, site.site.line, site.expr ? [site.expr] : []);
        bp = { id: b.id, addrs: b.addrs?.length ?? 1 };
      } catch (err) {
        const fn = site.site.function ? `${site.site.package}.${site.site.function}` : undefined;
        const linked = fn ? (await c.functions(`^${fn.replace(/[.*()[\]]/g, '\\$&')}$`)).length > 0 : true;
        bp = { unset: { message: err instanceof Error ? err.message : String(err), linked } };
      }
      byLine.set(key, bp);
    }
    const t: SiteTrace = { site, hits: 0, capped: false, values: [], ...(bp.unset ? { unset: bp.unset } : { addrs: bp.addrs! }) };
    traces.push(t);
    if (bp.id !== undefined) byId.set(bp.id, [...(byId.get(bp.id) ?? []), t]);
  }
  return { traces, byId };
}

function record(byId: Map<number, SiteTrace[]>, st: DlvState): number[] {
  const full: number[] = [];
  for (const th of st.Threads ?? []) {
    const bp: DlvBreakpoint | undefined = th.breakPoint;
    for (const t of bp ? byId.get(bp.id) ?? [] : []) {
      if (t.capped) continue;
      t.hits++;
      const v = th.breakPointInfo?.variables?.[0];
      if (v) t.values.push(v);
      t.first ??= { file: th.file, line: th.line, function: th.function?.name ?? '', goroutine: th.goroutineID, ...(v ? { variable: v } : {}) };
      if (t.hits >= HIT_CAP) { t.capped = true; if (!full.includes(bp!.id)) full.push(bp!.id); }
    }
  }
  return full;
}

/**
 * Runs the debuggee until `gate` resolves, then halts it; a debuggee that exits first aborts the
 * gate. Hit counts come from delve's own totalHitCount where the tracepoint still exists (capped
 * ones keep the count seen here).
 */
export async function traceUntil(c: DlvClient, { traces, byId }: Traced, gate: (signal: AbortSignal) => Promise<void>, stop?: (pid: number) => Promise<void>, shutdownMs = SHUTDOWN_MS): Promise<TraceOutcome> {
  const started = Date.now();
  const ac = new AbortController();
  let done = false;
  let exited: number | undefined;
  let pid = 0;
  let stopping: { at: number; exitStatus?: number } | undefined;
  const gated = gate(ac.signal).then(() => undefined, (err: unknown) => err);
  const loop = (async () => {
    try {
      while (!done) {
        const st = await c.command('continue');
        if (st.Pid) pid = st.Pid;
        if (st.exited) {
          if (stopping) stopping.exitStatus = st.exitStatus; else exited = st.exitStatus;
          break;
        }
        for (const id of record(byId, st)) await c.clear(id);
      }
    } finally {
      done = true;
      ac.abort();
    }
  })();
  const gateErr = await gated;
  if (!gateErr && stop && !done) {
    // Past the gate: SIGTERM, the tracepoints kept, until the debuggee exits (the shutdown path's reads).
    for (const t of traces) t.gateHits = t.hits;
    stopping = { at: Date.now() };
    pid ||= (await c.command('halt')).Pid;
    await stop(pid);
    // The timer is cleared once the debuggee exits: a pending one kept the CLI alive for shutdownMs.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([loop.catch(() => undefined), new Promise((res) => { timer = setTimeout(res, shutdownMs); })]);
    clearTimeout(timer);
  }
  done = true;
  // Halting is idempotent: repeated until the loop, between two continues, sees `done`; a debuggee
  // delve cannot halt within HALT_MS fails the run.
  let ended = false;
  void loop.finally(() => { ended = true; });
  const haltBy = Date.now() + HALT_MS;
  while (!ended) {
    if (Date.now() > haltBy) throw new Error(`delve did not halt the debuggee in ${HALT_MS / 1000}s`);
    await c.command('halt').catch(() => undefined);
    await Promise.race([loop.catch(() => undefined), new Promise((res) => setTimeout(res, 1000))]);
  }
  await loop;
  if (gateErr && exited === undefined) throw gateErr;
  if (exited === undefined && stopping?.exitStatus === undefined) {
    for (const bp of await c.breakpoints()) {
      for (const t of byId.get(bp.id) ?? []) if (!t.capped) t.hits = Math.max(t.hits, bp.totalHitCount ?? 0);
    }
  }
  const shutdown: Shutdown | undefined = stopping && { signal: 'SIGTERM', ...(stopping.exitStatus !== undefined ? { exitStatus: stopping.exitStatus } : {}), seconds: (Date.now() - stopping.at) / 1000 };
  return { traces, ...(exited !== undefined ? { exited } : {}), ...(shutdown ? { shutdown } : {}), seconds: (Date.now() - started) / 1000 };
}
