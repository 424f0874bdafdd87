// The shape every drill after 3.C5 shares, so a drill is only its DrillDef: baseline (every gate
// green, ca.crt hashed on each host), one real break, observe (the first journal line naming the
// failure, traced to its source line; the symptom through kubectl; what keeps working), optionally
// hold or stop there (--keep-broken), recover, wait for every gate, report. journal.ts, timeline.ts
// and report.ts are 3.C5's parts, reused.
import { iso, sleep, withConnected } from './connected.ts';
import type { Inventory } from '../../core/inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import { StepError } from '../../lib/errors.ts';
import { orAbort, retry } from '../../lib/retry.ts';
import { componentsOn, type ComponentName } from '../../core/components/registry/index.ts';
import { PKI_DIR } from '../../lib/constants.ts';
import { session, type WireContext } from '../../core/apply/context.ts';
import { adminCreds, adminKubeconfigPath } from '../../core/apply/creds.ts';
import { runGateChecks } from '../../core/gates/checks.ts';
import type { KubeCreds } from '../../core/transport/kube-api.ts';
import type { ReadSession } from '../../core/transport/index.ts';
import { FirstLines, type JournalSource } from './journal.ts';
import { Timeline } from './timeline.ts';
import { traceLine } from './trace.ts';
import type { KubectlResult } from './kubectl.ts';
import type { GateResult, RecoveryStep } from './report.ts';
import type { BlastItem, DrillRun, TracedLine } from './run-report.ts';
import type { Intent } from '../../core/apply/wet.ts';
import { unitOf } from '../../lib/unit.ts';

export interface DrillEnv {
  ctx: WireContext;
  inv: Inventory;
  stateDir: string;
  log: Logger;
  creds: KubeCreds;
  adminKubeconfig: string;
  timeline: Timeline;
  session(host: string): ReadSession;
  /** The journals of these units on every host that runs them (or only on `hosts`). */
  sources(units: ComponentName[], hosts?: string[]): JournalSource[];
}

export interface Broken {
  hosts: string[];
  action: string;
  /** When the failure began (ms): the reference for time to detect. */
  at: number;
  files?: string[];
}

/** Journals to search, with a journalctl -g pattern; a required group must show before observing ends. */
export interface CaptureGroup {
  label: string;
  units: ComponentName[];
  pattern: string;
  required?: boolean;
  onBrokenHosts?: boolean;
}

export interface Extra {
  detail: Record<string, unknown>;
  md: string[];
}

export interface DrillDef<B extends Broken = Broken> {
  name: string;
  title: string;
  whoLogs: string;
  /** The first line naming the failure. */
  capture: CaptureGroup;
  also?: CaptureGroup[];
  /** Refuses input the inventory makes wrong (an InputError), before anything touches a host. */
  validate?(inv: Inventory): void;
  /** Observe at least this long, so what dies later shows in the blast radius (a Lease lasts 15 s). */
  minObserveMs?: number;
  /** After the baseline, before the break (e.g. a Deployment to scale later). */
  prepare?(env: DrillEnv): Promise<void>;
  break(env: DrillEnv): Promise<B>;
  /** Runs from the break until observing ends (e.g. a health sampler). */
  during?(env: DrillEnv, b: B): Promise<Extra>;
  /** The symptom as kubectl shows it; undefined while it does not show. */
  symptom(env: DrillEnv, b: B): Promise<KubectlResult | undefined>;
  blastRadius(env: DrillEnv, b: B): Promise<BlastItem[]>;
  recover(
    env: DrillEnv,
    b: B,
  ): Promise<{ steps: RecoveryStep[]; wets: { intents: readonly Intent[] }[]; extra?: Extra }>;
  /** Runs after the recovery and also after a failed one (a namespace the drill made). */
  cleanup?(env: DrillEnv): Promise<void>;
}

export interface RunOptions {
  inventoryFile: string;
  observeTimeoutMs: number;
  gateTimeoutMs: number;
  /** Trust an unknown host key on first contact (--accept-new-host-keys). */
  acceptNewHostKeys?: boolean;
  keepBroken: boolean;
  /** Seconds to keep the cluster broken after observing, before recovering (to poke at it). */
  holdS: number;
}

const traced = (lines: { host: string; unit: string; at: string; line: string }[]): TracedLine[] =>
  lines.map((l) => ({ ...l, traces: traceLine(l.line) }));

export function recoveryCommand(o: Pick<RunOptions, 'inventoryFile'>, stateDir: string): string {
  return `hardwire wire --inventory ${o.inventoryFile} --state-dir ${stateDir}`;
}

export async function runDrill<B extends Broken>(
  inv: Inventory,
  stateDir: string,
  def: DrillDef<B>,
  opts: RunOptions,
  log: Logger,
): Promise<DrillRun> {
  return withConnected(inv, stateDir, opts, log, (ctx) => {
    const env: DrillEnv = {
      ctx,
      inv,
      stateDir,
      log,
      creds: adminCreds(ctx.clusterDir),
      adminKubeconfig: adminKubeconfigPath(ctx.clusterDir),
      timeline: new Timeline(log),
      session: (h) => session(ctx, h),
      sources: (units, hosts) =>
        units.flatMap((u) =>
          inv.hosts
            .filter((h) => componentsOn(h).includes(u) && (!hosts || hosts.includes(h.name)))
            .map((h) => ({ host: h.name, session: session(ctx, h.name), unit: unitOf(u) })),
        ),
    };
    return drill(env, def, opts);
  });
}

/** sha256 of ca.crt on every control-plane host, read there (the CA must never change). */
async function caHashes(
  env: DrillEnv,
): Promise<{ host: string; path: string; sha256: string | null }[]> {
  const path = `${PKI_DIR}/ca.crt`;
  return Promise.all(
    env.inv.controlPlaneHosts.map(async (h) => ({
      host: h.name,
      path,
      sha256: await env.session(h.name).sha256(path),
    })),
  );
}

/** Every registry gate, retried until green (a Lease is re-acquired up to one lease duration late). */
async function gatesGreen(env: DrillEnv, timeoutMs: number): Promise<GateResult[]> {
  let g: Awaited<ReturnType<typeof runGateChecks>> = [];
  const shown = () => g.map(({ name, ok, detail }) => ({ name, ok, detail }));
  return retry(
    async () => {
      g = await orAbort(runGateChecks(env.ctx));
      if (!g.every((x) => x.ok)) throw new Error('not green');
      return shown();
    },
    { timeoutMs, intervalMs: 2000, onTimeout: shown },
  );
}

async function drill<B extends Broken>(
  env: DrillEnv,
  def: DrillDef<B>,
  opts: RunOptions,
): Promise<DrillRun> {
  const { log, timeline } = env;
  const startedAt = iso();
  log.step(`Baseline: every gate green, ca.crt hashed on each host`);
  const baseGates = (await runGateChecks(env.ctx)).map(({ name, ok, detail }) => ({
    name,
    ok,
    detail,
  }));
  const red = baseGates.filter((g) => !g.ok);
  if (red.length > 0)
    throw new StepError(
      'drill baseline',
      `the cluster is not healthy before the drill; run "${recoveryCommand(opts, env.stateDir)}" first`,
      { detail: red.map((g) => `${g.name}: ${g.detail}`) },
    );
  const caBefore = await caHashes(env);
  timeline.mark(`baseline green (${baseGates.length} gates)`);
  await def.prepare?.(env);

  log.step(`Break: ${def.title}`);
  const b = await def.break(env);
  timeline.mark(`broken: ${b.action}`);
  const during = def.during?.(env, b);

  log.step(
    `Observe: ${def.capture.label} in ${def.capture.units.join(', ')}; the symptom through kubectl`,
  );
  const group = (g: CaptureGroup) => ({ g, lines: new FirstLines(g.pattern, b.at - 1000) });
  const main = group(def.capture);
  const also = (def.also ?? []).map(group);
  const poll = (x: ReturnType<typeof group>) =>
    x.lines.poll(env.sources(x.g.units, x.g.onBrokenHosts ? b.hosts : undefined));
  // Set inside the probe: declared wide, or TypeScript narrows it to null here.
  let symptom = null as DrillRun['symptom'];
  // Until the line, the symptom and every required line are seen (or the observe time is up: the report says what was not).
  await retry(
    async () => {
      const [found] = await orAbort(Promise.all([poll(main), ...also.map(poll)]));
      for (const c of found)
        timeline.mark(`${def.capture.label}: ${c.unit} on ${c.host} at ${c.at}`);
      if (!symptom) {
        const s = await def.symptom(env, b).catch(() => undefined);
        if (s) {
          symptom = { ...s, at: iso() };
          timeline.mark(`symptom: ${s.command} -> exit ${s.code}`);
        }
      }
      const allRequired = also.every((x) => !x.g.required || x.lines.size > 0);
      const seen =
        symptom &&
        main.lines.size > 0 &&
        allRequired &&
        Date.now() >= b.at + (def.minObserveMs ?? 0);
      if (!seen) throw new Error('not seen yet');
    },
    {
      timeoutMs: b.at + opts.observeTimeoutMs - Date.now(),
      intervalMs: 1000,
      onTimeout: () => undefined,
    },
  );
  const blastRadius = await def.blastRadius(env, b);
  timeline.mark(
    `still working: ${
      blastRadius
        .filter((x) => x.ok)
        .map((x) => x.what)
        .join('; ') || 'nothing probed'
    }`,
  );
  const duringExtra = during ? await during : undefined;
  const captured = traced(main.lines.lines());
  const firstAt = captured[0] ? Date.parse(captured[0].at) : undefined;
  const base = {
    drill: def.name,
    title: def.title,
    startedAt,
    baseline: { at: startedAt, gates: baseGates, caSha256: caBefore },
    broken: { hosts: b.hosts, action: b.action, at: iso(b.at), files: b.files ?? [] },
    whoLogs: def.whoLogs,
    captured,
    also: also.map((x) => ({ label: x.g.label, lines: traced(x.lines.lines()) })),
    symptom,
    blastRadius,
    timeToDetectMs: firstAt === undefined ? null : Math.max(0, firstAt - b.at),
    symptomAfterMs: symptom ? Date.parse(symptom.at) - b.at : null,
  };
  const command = recoveryCommand(opts, env.stateDir);
  if (opts.keepBroken) {
    timeline.mark(`kept broken; recover with: ${command}`);
    return {
      ...base,
      details: duringExtra?.detail ?? {},
      md: duringExtra?.md ?? [],
      keptBroken: { recoveryCommand: command },
      recovery: [],
      recovered: false,
      finalGates: [],
      caSha256After: [],
      caUnchanged: null,
      timeToRecoverMs: null,
      timeline: timeline.entries(env.ctx.wet),
    };
  }
  if (opts.holdS > 0) {
    log.step(`Hold: the cluster stays broken for ${opts.holdS} s`);
    await sleep(opts.holdS * 1000);
  }

  log.step('Recover, then wait for every gate');
  const t0 = Date.now();
  let rec: Awaited<ReturnType<DrillDef<B>['recover']>>;
  try {
    rec = await def.recover(env, b);
  } catch (err) {
    if (err instanceof StepError) throw err;
    throw new StepError(
      'drill recover',
      `${err instanceof Error ? err.message : String(err)}; the cluster may still be broken: run "${recoveryCommand(opts, env.stateDir)}"`,
      { cause: err },
    );
  } finally {
    await def.cleanup?.(env);
  }
  const finalGates = await gatesGreen(env, opts.gateTimeoutMs);
  const recovered = finalGates.every((g) => g.ok);
  const timeToRecoverMs = Date.now() - t0;
  const caAfter = await caHashes(env);
  const caUnchanged = caAfter.every(
    (a) => a.sha256 !== null && a.sha256 === caBefore.find((x) => x.host === a.host)?.sha256,
  );
  timeline.mark(
    `recovered=${recovered} in ${(timeToRecoverMs / 1000).toFixed(1)} s; ca.crt ${caUnchanged ? 'unchanged' : 'CHANGED'} on ${caAfter.map((a) => a.host).join(', ')}`,
  );
  return {
    ...base,
    details: { ...duringExtra?.detail, ...rec.extra?.detail },
    md: [...(duringExtra?.md ?? []), ...(rec.extra?.md ?? [])],
    recovery: rec.steps,
    recovered,
    finalGates,
    caSha256After: caAfter,
    caUnchanged,
    timeToRecoverMs,
    timeline: timeline.entries(env.ctx.wet, ...rec.wets),
  };
}
