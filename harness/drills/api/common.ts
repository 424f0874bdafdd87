// What the three API drills (3.C1-3.C3) share: the connected context and admin credentials, the
// baseline and final gate checks (the same registry checks `hardwire verify` runs), server-side
// apply and delete for the objects a drill creates, the real kubectl for symptoms, and the
// apiserver journal. One job each; the drills are the files next to this one.
import { join } from 'node:path';
import type { Inventory } from '../../../core/inventory/load.ts';
import type { Logger } from '../../../lib/log.ts';
import { StepError } from '../../../lib/errors.ts';
import { retry } from '../../../lib/retry.ts';
import { run } from '../../../lib/proc.ts';
import { kubectlPath } from '../../../core/components/binaries/cache.ts';
import { session, type WireContext } from '../../../core/apply/context.ts';
import { adminCreds, adminKubeconfigPath } from '../../../core/apply/creds.ts';
import { runGateChecks } from '../../../core/gates/checks.ts';
import { kubeRequest, type KubeCreds } from '../../../core/transport/kube-api.ts';
import { FirstLines, type JournalLine } from '../journal.ts';
import { Timeline } from '../timeline.ts';
import { iso, withConnected, type Connection } from '../connected.ts';
import type { GateResult } from '../report.ts';

export interface ApiDrillOptions extends Connection {
  observeTimeoutMs: number;
  keepBroken: boolean;
  listen?: string | undefined;
}

export interface DrillCtx {
  inv: Inventory;
  ctx: WireContext;
  creds: KubeCreds;
  adminConf: string;
  /** Operator-side files of the API drills: drill CA, webhook keys (0600), server log. */
  dir: string;
  log: Logger;
  timeline: Timeline;
}

export const LABEL = 'hardwire.dev/drill';
export { iso, sleep } from '../connected.ts';

export async function withDrillCtx<T>(
  inv: Inventory,
  stateDir: string,
  conn: Connection,
  log: Logger,
  drill: string,
  fn: (d: DrillCtx) => Promise<T>,
): Promise<T> {
  return withConnected(inv, stateDir, conn, log, (ctx) =>
    fn({
      inv,
      ctx,
      creds: adminCreds(ctx.clusterDir),
      adminConf: adminKubeconfigPath(ctx.clusterDir),
      dir: join(ctx.clusterDir, 'drills', drill),
      log,
      timeline: new Timeline(log),
    }),
  );
}

export async function gates(d: DrillCtx): Promise<GateResult[]> {
  return runGateChecks(d.ctx);
}

/** Baseline: every gate green, or the drill does not start. */
export async function baseline(d: DrillCtx): Promise<{ at: string; gates: GateResult[] }> {
  d.log.step('Baseline: every gate green');
  const g = await gates(d);
  const red = g.filter((x) => !x.ok);
  if (red.length > 0)
    throw new StepError(
      'drill baseline',
      'the cluster is not healthy before the drill; run "hardwire wire" first',
      { detail: red.map((x) => `${x.name}: ${x.detail}`) },
    );
  d.timeline.mark(`baseline green (${g.length} gates)`);
  return { at: iso(), gates: g };
}

/** Server-side apply (idempotent, so a re-run converges instead of failing on "already exists"). */
export async function apply(
  creds: KubeCreds,
  path: string,
  obj: object,
): Promise<Record<string, unknown>> {
  const r = await kubeRequest(creds, 'PATCH', `${path}?fieldManager=hardwire-drill&force=true`, {
    body: obj,
    contentType: 'application/apply-patch+yaml',
    timeoutMs: 30_000,
  });
  if (r.status < 200 || r.status > 299)
    throw new StepError(
      'drill apply',
      `PATCH ${path} returned ${r.status}: ${r.body.slice(0, 400)}`,
    );
  return JSON.parse(r.body) as Record<string, unknown>;
}

/** Deletes if present; a 404 is the state wanted. */
export async function remove(creds: KubeCreds, path: string): Promise<boolean> {
  const r = await kubeRequest(creds, 'DELETE', path, { timeoutMs: 30_000 });
  if (r.status === 404) return false;
  if (r.status < 200 || r.status > 299)
    throw new StepError(
      'drill cleanup',
      `DELETE ${path} returned ${r.status}: ${r.body.slice(0, 400)}`,
    );
  return true;
}

/** Waits until a namespace is gone (its finalizer empties it first), so a re-run can make it again. */
export async function namespaceGone(
  creds: KubeCreds,
  ns: string,
  timeoutMs = 120_000,
): Promise<void> {
  await retry(
    async () => {
      if ((await kubeRequest(creds, 'GET', `/api/v1/namespaces/${ns}`)).status !== 404)
        throw new StepError(
          'drill cleanup',
          `namespace ${ns} still exists after ${timeoutMs / 1000} s`,
        );
    },
    { timeoutMs, intervalMs: 500 },
  );
}

export interface KubectlRun {
  command: string;
  code: number;
  output: string;
  at: string;
  ms: number;
}

/** The real kubectl (the pinned build) as the admin: a symptom is what a user would see. */
export async function kubectl(
  d: DrillCtx,
  args: string[],
  stdin?: string,
  kubeconfig = d.adminConf,
): Promise<KubectlRun> {
  const t = Date.now();
  const r = await run(kubectlPath(), ['--kubeconfig', kubeconfig, ...args], {
    step: 'kubectl',
    allowFail: true,
    timeoutMs: 60_000,
    ...(stdin === undefined ? {} : { input: stdin }),
  });
  return {
    command: `kubectl ${kubeconfig === d.adminConf ? '' : `--kubeconfig ${kubeconfig} `}${args.join(' ')}${stdin === undefined ? '' : ` <<< '${stdin}'`}`,
    code: r.code,
    output: `${r.stdout}${r.stderr}`.trim(),
    at: iso(t),
    ms: Date.now() - t,
  };
}

/** The first apiserver journal line since `sinceMs` matching `pattern`, on any control-plane host. */
export class ApiserverJournal {
  readonly #lines: FirstLines;
  readonly #d: DrillCtx;
  constructor(d: DrillCtx, pattern: string, sinceMs: number) {
    this.#d = d;
    this.#lines = new FirstLines(pattern, sinceMs);
  }
  async poll(): Promise<JournalLine[]> {
    return this.#lines.poll(
      this.#d.inv.controlPlaneHosts.map((h) => ({
        host: h.name,
        session: session(this.#d.ctx, h.name),
        unit: 'kube-apiserver.service',
      })),
    );
  }
  lines(): JournalLine[] {
    return this.#lines.lines();
  }
}
