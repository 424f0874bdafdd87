// The tracing loop: one tracepoint per cited read site, continue until the gate passes, then halt
// and read the hit counts. Delve stops at a tracepoint and hands the stop to the client (as its own
// `trace` command does), so the loop continues after each one.
import type { DlvBreakpoint, DlvClient, DlvState, DlvVariable } from '../delve/rpc.ts';
import type { TraceSite } from './sites.ts';
import type { GuardProbe, GuardTrace } from './guards.ts';

/** After this many hits a tracepoint is cleared, so a hot loop does not slow the component into losing its Lease. */
export const HIT_CAP = 20;
const HALT_MS = 30_000;

export interface SiteHit {
  /** Where delve stopped, and the function it named. */
  file: string;
  line: number;
  function: string;
  goroutine: number;
  variable?: DlvVariable;
}

/** Why a line got no tracepoint: delve's message, and whether the cited function is in the binary at all. */
export interface Unset {
  message: string;
  linked: boolean;
}

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
export interface Shutdown {
  signal: 'SIGTERM';
  exitStatus?: number;
  seconds: number;
}

export interface TraceOutcome {
  traces: SiteTrace[];
  guards: Map<string, GuardTrace>;
  exited?: number;
  shutdown?: Shutdown;
  seconds: number;
}

/** How long a debuggee sent SIGTERM after its gate may take to exit before it is halted. */
export const SHUTDOWN_MS = 120_000;

/**
 * Tracepoints by delve id; a line cited for several flags (shared client-go code) has one
 * tracepoint, and so has a line that is a site and a guard: its variables are the first site's
 * value expression (when `siteVar`), then each guard's own, from `from`.
 */
export interface Traced {
  traces: SiteTrace[];
  byId: Map<number, SiteTrace[]>;
  siteVar: Set<number>;
  guards: Map<string, GuardTrace>;
  guardsById: Map<number, { gt: GuardTrace; from: number }[]>;
}

type Line = {
  file: string;
  line: number;
  vars: string[];
  siteVar: boolean;
  sites: SiteTrace[];
  guards: { gt: GuardTrace; from: number }[];
};

export async function setTracepoints(
  c: DlvClient,
  sites: TraceSite[],
  probes: GuardProbe[] = [],
): Promise<Traced> {
  const lines = new Map<string, Line>();
  const traces: SiteTrace[] = [];
  for (const site of sites) {
    const key = `${site.file}:${site.site.line}`;
    let l = lines.get(key);
    if (!l)
      lines.set(
        key,
        (l = {
          file: site.file,
          line: site.site.line,
          vars: site.expr ? [site.expr] : [],
          siteVar: !!site.expr,
          sites: [],
          guards: [],
        }),
      );
    const t: SiteTrace = { site, hits: 0, capped: false, values: [] };
    l.sites.push(t);
    traces.push(t);
  }
  const guards = new Map<string, GuardTrace>();
  for (const probe of probes) {
    const key = `${probe.file}:${probe.line}`;
    let l = lines.get(key);
    if (!l)
      lines.set(
        key,
        (l = {
          file: probe.file,
          line: probe.line,
          vars: [],
          siteVar: false,
          sites: [],
          guards: [],
        }),
      );
    const gt: GuardTrace = { probe, hits: 0, capped: false, evals: [] };
    l.guards.push({ gt, from: l.vars.length });
    l.vars.push(...probe.vars);
    guards.set(probe.key, gt);
  }
  const byId = new Map<number, SiteTrace[]>();
  const guardsById = new Map<number, { gt: GuardTrace; from: number }[]>();
  const siteVar = new Set<number>();
  for (const l of lines.values()) {
    try {
      const b = await c.trace(l.file, l.line, l.vars);
      for (const t of l.sites) t.addrs = b.addrs?.length ?? 1;
      byId.set(b.id, l.sites);
      guardsById.set(b.id, l.guards);
      if (l.siteVar) siteVar.add(b.id);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      for (const g of l.guards) g.gt.unset = message;
      const site = l.sites[0]?.site;
      if (!site) continue;
      const fn = site.site.function ? `${site.site.package}.${site.site.function}` : undefined;
      const linked = fn
        ? (await c.functions(`^${fn.replace(/[.*()[\]]/g, '\\$&')}$`)).length > 0
        : true;
      for (const t of l.sites) t.unset = { message, linked };
    }
  }
  return { traces, byId, siteVar, guards, guardsById };
}

function record({ byId, siteVar, guardsById }: Traced, st: DlvState): number[] {
  const full: number[] = [];
  for (const th of st.Threads ?? []) {
    const bp: DlvBreakpoint | undefined = th.breakPoint;
    if (!bp) continue;
    const vars = th.breakPointInfo?.variables ?? [];
    const sites = byId.get(bp.id) ?? [];
    const gs = guardsById.get(bp.id) ?? [];
    if (sites.every((t) => t.capped) && gs.every((g) => g.gt.capped)) continue;
    const v = siteVar.has(bp.id) ? vars[0] : undefined;
    for (const t of sites) {
      t.hits++;
      if (v) t.values.push(v);
      t.first ??= {
        file: th.file,
        line: th.line,
        function: th.function?.name ?? '',
        goroutine: th.goroutineID,
        ...(v ? { variable: v } : {}),
      };
    }
    for (const { gt, from } of gs) {
      gt.hits++;
      gt.evals.push(vars.slice(from, from + gt.probe.vars.length));
    }
    if (Math.max(0, ...sites.map((t) => t.hits), ...gs.map((g) => g.gt.hits)) >= HIT_CAP) {
      for (const t of sites) t.capped = true;
      for (const g of gs) g.gt.capped = true;
      full.push(bp.id);
    }
  }
  return full;
}

/** Waits for `p` to settle, or `ms`; the timer is cleared either way (a pending one kept the CLI alive). */
async function atMost(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    p.catch(() => undefined),
    new Promise((res) => {
      timer = setTimeout(res, ms);
    }),
  ]);
  clearTimeout(timer);
}

/**
 * Runs the debuggee until `gate` resolves, then halts it; a debuggee that exits first aborts the
 * gate. Hit counts come from delve's own totalHitCount where the tracepoint still exists (capped
 * ones keep the count seen here).
 */
export async function traceUntil(
  c: DlvClient,
  traced: Traced,
  gate: (signal: AbortSignal) => Promise<void>,
  stop?: (pid: number) => Promise<void>,
  shutdownMs = SHUTDOWN_MS,
): Promise<TraceOutcome> {
  const { traces, byId, guards, guardsById } = traced;
  const started = Date.now();
  const ac = new AbortController();
  let done = false;
  let exited: number | undefined;
  let pid = 0;
  let stopping: { at: number; exitStatus?: number } | undefined;
  const gated = gate(ac.signal).then(
    () => undefined,
    (err: unknown) => err,
  );
  const loop = (async () => {
    try {
      while (!done) {
        const st = await c.command('continue');
        if (st.Pid) pid = st.Pid;
        if (st.exited) {
          if (stopping) stopping.exitStatus = st.exitStatus;
          else exited = st.exitStatus;
          break;
        }
        for (const id of record(traced, st)) await c.clear(id);
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
    await atMost(loop, shutdownMs);
  }
  done = true;
  // Halting is idempotent: repeated until the loop, between two continues, sees `done`; a debuggee
  // delve cannot halt within HALT_MS fails the run.
  let ended = false;
  void loop.finally(() => {
    ended = true;
  });
  const haltBy = Date.now() + HALT_MS;
  while (!ended) {
    if (Date.now() > haltBy)
      throw new Error(`delve did not halt the debuggee in ${HALT_MS / 1000}s`);
    await c.command('halt').catch(() => undefined);
    await atMost(loop, 1000);
  }
  await loop;
  if (gateErr && exited === undefined) throw gateErr;
  if (exited === undefined && stopping?.exitStatus === undefined) {
    for (const bp of await c.breakpoints()) {
      for (const t of byId.get(bp.id) ?? [])
        if (!t.capped) t.hits = Math.max(t.hits, bp.totalHitCount ?? 0);
      // A stop delve counted and the loop did not see leaves a guard's evaluations incomplete (guards.ts keptOut).
      for (const { gt } of guardsById.get(bp.id) ?? [])
        if (!gt.capped) gt.hits = Math.max(gt.hits, bp.totalHitCount ?? 0);
    }
  }
  const shutdown: Shutdown | undefined = stopping && {
    signal: 'SIGTERM',
    ...(stopping.exitStatus !== undefined ? { exitStatus: stopping.exitStatus } : {}),
    seconds: (Date.now() - stopping.at) / 1000,
  };
  return {
    traces,
    guards,
    ...(exited !== undefined ? { exited } : {}),
    ...(shutdown ? { shutdown } : {}),
    seconds: (Date.now() - started) / 1000,
  };
}
