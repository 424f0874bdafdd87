// Drill 3.C5: an expired component certificate. Baseline, break (a cert from the real CA with a
// short window, or already expired), observe (the first x509 line from a real journal, and the
// user-visible symptom), recover in order through certs renew + wire's gates, report.
import { iso, sleep, withConnected } from './connected.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Host, Inventory } from '../../core/inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import { StepError } from '../../lib/errors.ts';
import { abort, orAbort, retry } from '../../lib/retry.ts';
import { componentsOn, LEASES, type ComponentName } from '../../core/components/registry/index.ts';
import { K8S_DIR } from '../../lib/constants.ts';
import { KUBECONFIGS, type CaId } from '../../core/pki/table.ts';
import { issueLeaf, type Window } from '../../core/pki/issue.ts';
import { kubeconfigServer, kubeconfigYaml } from '../../core/pki/kubeconfig.ts';
import { pkiDir } from '../../core/pki/store.ts';
import { session, type WireContext } from '../../core/apply/context.ts';
import { adminCreds } from '../../core/apply/creds.ts';
import { runGateChecks } from '../../core/gates/checks.ts';
import { readLease } from '../../core/gates/leases.ts';
import { checkHosts } from '../../core/certs/check.ts';
import { remoteCerts } from '../../core/certs/catalog.ts';
import {
  caFingerprints,
  keptSpec,
  loadSigner,
  publicPemOf,
  pushRenewed,
  renewOperatorCopies,
  specsFor,
} from '../../core/certs/renew.ts';
import { targetDef, type Mode, type Target, type TargetDef } from './cert-expiry-targets.ts';
import { FirstLines, type JournalSource } from './journal.ts';
import { errText, leaseOf, readyzEtcd, symptomNow } from './symptoms.ts';
import { changes, Timeline } from './timeline.ts';
import { WIRE_ROLL, type DrillReport } from './report.ts';
import { unitOf } from '../../lib/unit.ts';

export { TARGETS, type Mode, type Target } from './cert-expiry-targets.ts';
export { drillMarkdown, type DrillReport } from './report.ts';

export interface DrillOptions {
  target: Target;
  mode: Mode;
  windowS: number;
  gateTimeoutMs: number;
  /** Trust an unknown host key on first contact (--accept-new-host-keys). */
  acceptNewHostKeys?: boolean;
  /** How long to wait for the x509 line and the symptom once the cert is invalid. */
  observeTimeoutMs: number;
}

export async function certExpiryDrill(
  inv: Inventory,
  stateDir: string,
  opts: DrillOptions,
  log: Logger,
): Promise<DrillReport> {
  const timeline = new Timeline(log);
  return withConnected(inv, stateDir, opts, log, (ctx) =>
    drill(ctx, targetDef(opts.target), opts, timeline),
  );
}

async function drill(
  ctx: WireContext,
  def: TargetDef,
  opts: DrillOptions,
  timeline: Timeline,
): Promise<DrillReport> {
  const { inv, stateDir, log } = ctx;
  const creds = adminCreds(ctx.clusterDir);
  const via = session(ctx, inv.etcdHosts[0]!.name);
  const s = (h: string) => session(ctx, h);

  // 1. Baseline: the same registry checks `hardwire verify` runs.
  log.step(`Baseline: every gate green, CA fingerprints, Lease renew times`);
  const baseGates = await runGateChecks(ctx);
  const red = baseGates.filter((g) => !g.ok);
  if (red.length > 0)
    throw new StepError(
      'drill baseline',
      `the cluster is not healthy before the drill; run "hardwire wire" first`,
      { detail: red.map((g) => `${g.name}: ${g.detail}`) },
    );
  const caBefore = caFingerprints(stateDir, inv).certs;
  const check0 = await checkHosts(inv, ctx.sessions);
  const spec0 = specsFor(inv, [def.leafId]);
  const caId = spec0[0]!.ca;
  const remoteCaMismatch = check0.cas.filter((c) => c.fingerprint !== caBefore[c.name as CaId]);
  if (remoteCaMismatch.length > 0)
    throw new StepError(
      'drill baseline',
      'a CA on a host differs from the operator copy; run "hardwire wire" first',
      { detail: remoteCaMismatch.map((c) => `${c.host} ${c.path} ${c.fingerprint}`) },
    );
  const baseline = {
    at: iso(),
    gates: baseGates,
    caFingerprints: caBefore,
    remoteCaFingerprints: check0.cas.map((c) => ({
      host: c.host,
      ca: c.name,
      fingerprint: c.fingerprint,
    })),
    leases: Object.fromEntries(
      await Promise.all(
        LEASES.map(async ({ lease }) => [lease, await readLease(creds, lease)] as const),
      ),
    ),
  };
  timeline.mark(`baseline green (${baseGates.length} gates); ${caId} ${caBefore[caId]}`);

  // 2. Break: a cert from the real CA, same subject/SANs/usages and key as the operator copy.
  const hosts: Host[] =
    def.where === 'first-etcd'
      ? [inv.etcdHosts[0]!]
      : inv.hosts.filter((h) => remoteCerts(inv, h).some((c) => c.leafId === def.leafId));
  const names = hosts.map((h) => h.name).join(', ');
  log.step(
    `Break: stop ${def.component}, install a ${def.cert} cert ${opts.mode === 'expired' ? 'that has already expired' : `valid for ${opts.windowS} s`} on ${names}, start it`,
  );
  const dir = pkiDir(stateDir, inv);
  const ca = loadSigner(stateDir, inv, caId);
  const files: string[] = [];
  // Stop first (a kube-apiserver drains for up to 60 s), so the window starts when the component loads the cert.
  await Promise.all(
    hosts.map((h) =>
      ctx.wet.run(h.name, `systemctl stop ${unitOf(def.component)}`, (w) =>
        w.exec(['systemctl', 'stop', unitOf(def.component)], { timeoutMs: 180_000 }),
      ),
    ),
  );
  const now = Date.now();
  const win: Window =
    opts.mode === 'expired'
      ? { notBefore: new Date(now - 2 * 3600_000), notAfter: new Date(now - 3600_000) }
      : { notBefore: new Date(now - 60_000), notAfter: new Date(now + opts.windowS * 1000) };
  const installedAt = Date.now();
  await Promise.all(
    hosts.map(async (h) => {
      const spec = spec0.find((x) => !x.host || x.host === h.name)!;
      const certPem = readFileSync(join(dir, `${spec.file}.crt`), 'utf8');
      const keyPem = readFileSync(join(dir, `${spec.file}.key`), 'utf8');
      const broken = await issueLeaf(keptSpec(spec, certPem), ca, win, {
        key: { keyPem, publicPem: publicPemOf(keyPem) },
      });
      const rc = remoteCerts(inv, h).find((c) => c.leafId === def.leafId)!;
      if (rc.embedded) {
        const k = KUBECONFIGS.find((x) => x.file === rc.name)!;
        const yaml = kubeconfigYaml({
          cluster: inv.cluster.name,
          server: kubeconfigServer(k, inv.endpoint),
          caPem: loadSigner(stateDir, inv, 'ca').certPem,
          certPem: broken.certPem,
          keyPem,
          user: spec.cn,
        });
        await ctx.wet.run(
          h.name,
          `write ${K8S_DIR}/${k.file} with the short-lived client cert (same key)`,
          (w) => w.writeFileAtomic(rc.path, yaml, { mode: 0o600, owner: 'root:root' }),
        );
      } else {
        await ctx.wet.run(h.name, `write ${rc.path} (short-lived, same key)`, (w) =>
          w.writeFileAtomic(rc.path, broken.certPem, { mode: 0o644, owner: 'root:root' }),
        );
      }
      files.push(`${h.name}:${rc.path}`);
    }),
  );
  log.info(
    `  installed ${def.cert} valid ${iso(win.notBefore)} .. ${iso(win.notAfter)} on ${names}`,
  );
  const restart = async (verb: 'start' | 'restart', why: string) => {
    // In parallel: this is the break, not a roll; the roll comes with the recovery.
    // --no-block: etcd is Type=notify, and a member whose peer cert is rejected never reports ready,
    // so a blocking start would wait out TimeoutStartSec instead of letting the drill observe.
    await Promise.all(
      hosts.map((h) =>
        ctx.wet.run(h.name, `systemctl ${verb} ${unitOf(def.component)} (${why})`, (w) =>
          w.exec(['systemctl', verb, '--no-block', unitOf(def.component)], {
            timeoutMs: 180_000,
          }),
        ),
      ),
    );
  };
  await restart('start', 'load the short-lived cert');
  const loadedAt = Date.now();
  let invalidFrom = opts.mode === 'expired' ? loadedAt : win.notAfter.getTime();
  if (opts.mode === 'window') {
    log.step(
      `Wait out the window: ${Math.max(0, Math.round((invalidFrom - Date.now()) / 1000))} s until ${iso(invalidFrom)}`,
    );
    while (Date.now() < invalidFrom) await sleep(Math.min(1000, invalidFrom - Date.now()));
    timeline.mark(`the ${def.cert} cert expired`);
  }

  // 3. Observe: the first real x509 line per host and unit, and the symptom.
  log.step(
    `Observe: journals of ${def.logUnits.join(', ')} (first x509 line), and the symptom (${def.symptom})`,
  );
  const sources = (units: ComponentName[]): JournalSource[] =>
    units.flatMap((u) =>
      inv.hosts
        .filter((h) => componentsOn(h).includes(u))
        .map((h) => ({ host: h.name, session: s(h.name), unit: unitOf(u) })),
    );
  const since = opts.mode === 'expired' ? installedAt : invalidFrom - 1000;
  const captured = new FirstLines('x509', since);
  // What the component itself logs, which is often not the x509 error.
  const related = new FirstLines('Unauthorized|certificate|tls:', since);
  // Set inside the probe: declared wide, or TypeScript narrows them here.
  let symptom = null as DrillReport['symptom'];
  let reconnectForced = undefined as { at: string; why: string } | undefined;
  const forceReconnect = new Error('force a reconnect');
  // Until the x509 line and the symptom are both seen, or the observe time after expiry is up. In
  // window mode, nothing 30 s after expiry ends the wait early, once, for the reconnect below.
  const observe = () =>
    retry(
      async () => {
        const [found] = await orAbort(
          Promise.all([
            captured.poll(sources(def.logUnits)),
            related.poll(sources(def.logUnits.filter((u) => u === def.component))),
          ]),
        );
        for (const c of found) timeline.mark(`x509 in ${c.unit} on ${c.host} at ${c.at}`);
        if (!symptom) {
          const sym = await symptomNow(def.symptom, {
            inv,
            creds,
            via,
            component: def.component,
          }).catch((e: unknown) => `could not read the symptom: ${errText(e)}`);
          if (sym && !sym.startsWith('could not read')) {
            symptom = { kind: def.symptom, detail: sym, at: iso() };
            timeline.mark(`symptom: ${sym}`);
          }
        }
        if (symptom && captured.size > 0) return;
        if (
          opts.mode === 'window' &&
          !reconnectForced &&
          !symptom &&
          Date.now() > invalidFrom + 30_000
        )
          throw abort(forceReconnect);
        throw new Error('not seen yet');
      },
      {
        timeoutMs: invalidFrom + opts.observeTimeoutMs - Date.now(),
        intervalMs: 2000,
        onTimeout: () => undefined,
      },
    );
  if (
    await observe().then(
      () => false,
      (e: unknown) => {
        if (e === forceReconnect) return true;
        throw e;
      },
    )
  ) {
    // A client cert is checked at the TLS handshake: a connection opened while the cert was valid
    // stays up after it expires. Force the reconnect a restart or reboot would.
    const why = `no symptom 30 s after expiry: ${def.component} keeps the connections it opened while the cert was valid, and TLS checks a cert only at the handshake; restart it, as the next reboot or crash would`;
    await restart('restart', 'reconnect with the expired cert');
    reconnectForced = { at: iso(), why };
    invalidFrom = Date.now();
    log.info(`  restarted ${def.component}: ${why}`);
    await observe();
  }
  const capturedLines = captured.lines();
  const detectedAt =
    symptom && capturedLines.length > 0
      ? Math.max(new Date(symptom.at).getTime(), new Date(capturedLines[0]!.at).getTime())
      : undefined;
  const check1 = await checkHosts(inv, ctx.sessions);
  const checkAfterBreak = check1.certs.filter((c) => c.name === def.cert);
  timeline.mark(`certs check: ${checkAfterBreak.map((c) => `${c.host} ${c.status}`).join(', ')}`);

  // 4. Recover, in order.
  log.step('Recover: renew from the unchanged CA, restart readers in order, wait for every gate');
  const recovery: DrillReport['recovery'] = [];
  const t0 = Date.now();
  recovery.push({
    step: `renew ${def.cert} in the operator PKI from the existing ${caId} (subject, SANs, usages and key kept)`,
    why: 'the CA is not the problem and must not change: every other cert and every host trusts it; only the leaf is reissued',
    at: iso(),
  });
  await renewOperatorCopies(stateDir, inv, [def.leafId], { newKey: false, log });
  recovery.push({
    step: `push ${def.cert} to ${names} atomically; restart ${def.component} where it runs, one host at a time, each followed by its gate (start it where it is down); then every gate`,
    why: `${def.component} reads the file only at start; wire's order (etcd, kube-apiserver, controllers) restarts a dependency before its clients, and one host at a time keeps quorum and a ready apiserver`,
    at: iso(),
  });
  const pushed = await pushRenewed(inv, stateDir, [def.leafId], {
    restart: true,
    gateTimeoutMs: opts.gateTimeoutMs,
    acceptNewHostKeys: opts.acceptNewHostKeys === true,
    log,
  });
  for (const e of changes(pushed.ctx.wet.intents))
    recovery.push({ step: e.event, why: WIRE_ROLL, at: e.at });
  const finalGates = await runGateChecks(ctx);
  const recovered = finalGates.every((g) => g.ok);
  const timeToRecoverMs = Date.now() - t0;
  let confirmation = '';
  if (def.symptom === 'lease-not-renewing') {
    const lease = leaseOf(def.component);
    const l = await readLease(creds, lease);
    confirmation = `Lease kube-system/${lease} held by ${l.holder}, renewed ${l.renewTime} (was stuck at ${symptom?.detail.match(/last renewed (\S+)/)?.[1] ?? '?'})`;
  } else if (def.symptom === 'readyz-etcd-failing') {
    confirmation =
      (await readyzEtcd(inv, creds)) ??
      `/readyz [+]etcd ok on ${inv.controlPlaneHosts.map((h) => h.name).join(', ')}`;
  } else {
    confirmation = finalGates.map((g) => `${g.ok ? 'ok' : 'FAIL'} ${g.name}`).join('; ');
  }
  recovery.push({ step: 'confirm', why: confirmation, at: iso() });
  timeline.mark(
    `recovered=${recovered} in ${(timeToRecoverMs / 1000).toFixed(1)} s; ${confirmation}`,
  );

  // 5. The CA did not change, on the operator side or on any host.
  const caAfter = caFingerprints(stateDir, inv).certs;
  const check2 = await checkHosts(inv, ctx.sessions);
  const remoteSame = check2.cas.every((c) => c.fingerprint === caAfter[c.name as CaId]);
  const unchanged = JSON.stringify(caBefore) === JSON.stringify(caAfter) && remoteSame;

  return {
    target: opts.target,
    mode: opts.mode,
    window: { notBefore: iso(win.notBefore), notAfter: iso(win.notAfter) },
    baseline,
    broken: {
      hosts: hosts.map((h) => h.name),
      files,
      installedAt: iso(installedAt),
      loadedAt: iso(loadedAt),
      invalidFrom: iso(invalidFrom),
      ...(reconnectForced ? { reconnectForced } : {}),
    },
    whoLogs: def.whoLogs,
    captured: capturedLines,
    related: related.lines(),
    symptom,
    checkAfterBreak,
    recovery,
    recovered,
    finalGates,
    confirmation,
    caFingerprint: { ca: caId, before: caBefore[caId], after: caAfter[caId], unchanged },
    caFingerprints: { before: caBefore, after: caAfter },
    timeToDetectMs: detectedAt === undefined ? null : detectedAt - invalidFrom,
    timeToRecoverMs,
    timeline: timeline.entries(ctx.wet, pushed.ctx.wet),
  };
}
