// Drill 3.C5: an expired component certificate. Baseline, break (a cert from the real CA with a
// short window, or already expired), observe (the first x509 line from a real journal, and the
// user-visible symptom), recover in order through certs renew + wire's gates, report.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Host, Inventory } from '../inventory/load.ts';
import type { Logger } from '../lib/log.ts';
import { StepError } from '../lib/errors.ts';
import type { Session } from '../transport/index.ts';
import type { ComponentName } from '../components/models/index.ts';
import { K } from '../components/models/types.ts';
import { KUBECONFIGS, type CaId } from '../pki/table.ts';
import { issueLeaf, type Window } from '../pki/issue.ts';
import { kubeconfigServer, kubeconfigYaml } from '../pki/kubeconfig.ts';
import { clusterStateDir, pkiDir } from '../pki/store.ts';
import { newContext, type WireContext } from '../apply/context.ts';
import { connectPhase } from '../apply/phases/connect.ts';
import { adminCreds } from '../apply/creds.ts';
import { checkEtcd } from '../gates/etcd.ts';
import { checkApiserver } from '../gates/apiserver.ts';
import { checkLeaseRenewing, readLease } from '../gates/leases.ts';
import { kubeRequest, withServer, type KubeCreds } from '../kube/client.ts';
import { checkHosts, type CertRow } from '../certs/check.ts';
import { remoteCerts } from '../certs/catalog.ts';
import { caFingerprints, keptSpec, loadSigner, publicPemOf, pushRenewed, renewOperatorCopies, specsFor } from '../certs/renew.ts';

export const TARGETS = ['kube-scheduler', 'kube-controller-manager', 'apiserver-etcd-client', 'apiserver', 'etcd-peer'] as const;
export type Target = typeof TARGETS[number];
export type Mode = 'window' | 'expired';
type SymptomKind = 'lease-not-renewing' | 'readyz-etcd-failing' | 'apiserver-tls-rejected' | 'etcd-unhealthy';

interface TargetDef {
  leafId: string;
  /** Name in certs check. */
  cert: string;
  /** The component that loads the cert. */
  component: ComponentName;
  /** Break it on every host that has it, or only on the first etcd host (a peer cert). */
  where: 'all' | 'first-etcd';
  /** Journals that log the rejection, in the order we look. */
  logUnits: ComponentName[];
  symptom: SymptomKind;
  /** Why these journals. */
  whoLogs: string;
}

const DEFS: Record<Target, TargetDef> = {
  'kube-scheduler': {
    leafId: 'kubeconfig-scheduler', cert: 'scheduler.conf', component: 'kube-scheduler', where: 'all', logUnits: ['kube-apiserver', 'kube-scheduler'], symptom: 'lease-not-renewing',
    whoLogs: 'the apiserver verifies client certs per request, so the x509 error is in the kube-apiserver journal; the scheduler itself only sees 401 Unauthorized',
  },
  'kube-controller-manager': {
    leafId: 'kubeconfig-controller-manager', cert: 'controller-manager.conf', component: 'kube-controller-manager', where: 'all', logUnits: ['kube-apiserver', 'kube-controller-manager'], symptom: 'lease-not-renewing',
    whoLogs: 'the apiserver verifies client certs per request, so the x509 error is in the kube-apiserver journal; the controller-manager itself only sees 401 Unauthorized',
  },
  'apiserver-etcd-client': {
    leafId: 'apiserver-etcd-client', cert: 'apiserver-etcd-client', component: 'kube-apiserver', where: 'all', logUnits: ['etcd', 'kube-apiserver'], symptom: 'readyz-etcd-failing',
    whoLogs: 'etcd verifies client certs in the TLS handshake and logs the rejected connection; the apiserver only sees the handshake fail',
  },
  apiserver: {
    leafId: 'apiserver', cert: 'apiserver', component: 'kube-apiserver', where: 'all', logUnits: ['kube-scheduler', 'kube-controller-manager', 'kube-apiserver'], symptom: 'apiserver-tls-rejected',
    whoLogs: 'clients verify the serving cert, so the x509 error is in the scheduler and controller-manager journals; the apiserver logs the TLS handshake error',
  },
  'etcd-peer': {
    leafId: 'etcd-peer', cert: 'etcd-peer', component: 'etcd', where: 'first-etcd', logUnits: ['etcd'], symptom: 'etcd-unhealthy',
    whoLogs: 'the other members verify the peer cert in the TLS handshake and log the rejected connection',
  },
};

export interface DrillOptions {
  target: Target;
  mode: Mode;
  windowS: number;
  gateTimeoutMs: number;
  /** How long to wait for the x509 line and the symptom once the cert is invalid. */
  observeTimeoutMs: number;
}

export interface Captured { host: string; unit: string; at: string; line: string }
export interface TimelineEntry { at: string; event: string }

export interface DrillReport {
  target: Target;
  mode: Mode;
  window?: { notBefore: string; notAfter: string };
  baseline: {
    at: string;
    gates: { name: string; ok: boolean; detail: string }[];
    caFingerprints: Record<CaId, string>;
    remoteCaFingerprints: { host: string; ca: string; fingerprint: string | undefined }[];
    leases: Record<string, { holder: string; renewTime: string }>;
  };
  broken: { hosts: string[]; files: string[]; installedAt: string; loadedAt: string; invalidFrom: string; reconnectForced?: { at: string; why: string } };
  whoLogs: string;
  captured: Captured[];
  related: Captured[];
  symptom: { kind: SymptomKind; detail: string; at: string } | null;
  checkAfterBreak: CertRow[];
  recovery: { step: string; why: string; at: string }[];
  recovered: boolean;
  finalGates: { name: string; ok: boolean; detail: string }[];
  confirmation: string;
  caFingerprint: { before: string; after: string; ca: CaId; unchanged: boolean };
  caFingerprints: { before: Record<CaId, string>; after: Record<CaId, string> };
  timeToDetectMs: number | null;
  timeToRecoverMs: number;
  timeline: TimelineEntry[];
}

const iso = (t: number | Date = Date.now()) => new Date(t).toISOString();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const errText = (e: unknown) => (e instanceof Error ? e.message : String(e));

async function gates(inv: Inventory, creds: KubeCreds, via: Session): Promise<{ name: string; ok: boolean; detail: string }[]> {
  const out: { name: string; ok: boolean; detail: string }[] = [];
  const run = async (name: string, fn: () => Promise<string>) => {
    try { out.push({ name, ok: true, detail: await fn() }); } catch (e) { out.push({ name, ok: false, detail: errText(e) }); }
  };
  await run('etcd: members healthy over mTLS, member list = inventory', async () => (await checkEtcd(inv, via)).members.join(', '));
  for (const h of inv.controlPlaneHosts) await run(`kube-apiserver ${h.name}: /livez and /readyz`, async () => { await checkApiserver(creds, h.address); return '200'; });
  await Promise.all(['kube-controller-manager', 'kube-scheduler'].map((l) => run(`${l}: Lease held and renewing`, async () => { const s = await checkLeaseRenewing(creds, l); return `${s.holder} @ ${s.renewTime}`; })));
  return out;
}

/** The first journal line of a unit since a time that mentions x509 (or matches pattern), read with journalctl -g. */
async function firstLine(s: Session, host: string, unit: string, sinceMs: number, pattern: string): Promise<Captured | undefined> {
  const r = await s.exec(['journalctl', '-u', `${unit}.service`, `--since=@${Math.floor(sinceMs / 1000)}`, '-g', pattern, '-o', 'json', '--output-fields=MESSAGE', '--no-pager'], { allowFail: true, timeoutMs: 20_000 });
  for (const l of r.stdout.split('\n')) {
    if (!l.trim()) continue;
    let e: { __REALTIME_TIMESTAMP?: string; MESSAGE?: unknown };
    try { e = JSON.parse(l) as typeof e; } catch { continue; }
    const us = Number(e.__REALTIME_TIMESTAMP ?? 0);
    if (us / 1000 < sinceMs) continue;
    const msg = typeof e.MESSAGE === 'string' ? e.MESSAGE : Array.isArray(e.MESSAGE) ? Buffer.from(e.MESSAGE as number[]).toString('utf8') : '';
    return { host, unit: `${unit}.service`, at: new Date(us / 1000).toISOString(), line: msg };
  }
  return undefined;
}

async function readyzEtcd(inv: Inventory, creds: KubeCreds): Promise<string | undefined> {
  const bad: string[] = [];
  for (const h of inv.controlPlaneHosts) {
    try {
      const r = await kubeRequest(withServer(creds, `https://${h.address}:6443`), 'GET', '/readyz?verbose', { timeoutMs: 5000 });
      const failing = r.body.split('\n').filter((l) => l.startsWith('[-]'));
      if (r.status !== 200 && failing.some((l) => l.includes('etcd'))) bad.push(`${h.name} /readyz ${r.status}: ${failing.join('; ')}`);
    } catch (e) {
      bad.push(`${h.name} /readyz unreachable (${errText(e)}): kube-apiserver cannot reach its storage, so it does not serve`);
    }
  }
  return bad.length > 0 ? bad.join(' | ') : undefined;
}

async function symptomNow(def: TargetDef, inv: Inventory, creds: KubeCreds, via: Session): Promise<string | undefined> {
  switch (def.symptom) {
    case 'lease-not-renewing': {
      const l = await readLease(creds, def.component);
      const age = Date.now() - new Date(l.renewTime).getTime();
      // The default renew period is 2 s and lease duration 15 s: 15 s without a renewal is a dead leader.
      return age > 15_000 ? `Lease kube-system/${def.component} held by ${l.holder || 'nobody (released)'}, last renewed ${l.renewTime} (${Math.round(age / 1000)} s ago; renews every 2 s when healthy)` : undefined;
    }
    case 'readyz-etcd-failing':
      return readyzEtcd(inv, creds);
    case 'apiserver-tls-rejected': {
      const bad: string[] = [];
      for (const h of inv.controlPlaneHosts) {
        try { await checkApiserver(creds, h.address); } catch (e) { if (/certificate|x509|CERT_/i.test(errText(e))) bad.push(`${h.name}: ${errText(e)}`); }
      }
      return bad.length > 0 ? `hardwire's own client rejects the serving cert: ${bad.join('; ')}` : undefined;
    }
    case 'etcd-unhealthy':
      try { await checkEtcd(inv, via); return undefined; } catch (e) { return `etcd: ${errText(e)}`; }
  }
}

function leasesOf(g: { name: string; detail: string }[]): Record<string, { holder: string; renewTime: string }> {
  return Object.fromEntries(g.filter((x) => x.name.includes('Lease')).map((x) => {
    const [holder, renewTime] = x.detail.split(' @ ');
    return [x.name.split(':')[0]!, { holder: holder ?? '', renewTime: renewTime ?? '' }];
  }));
}

/** A logger that also timestamps the host changes wire reports, for the recovery timeline. */
function recording(log: Logger, into: TimelineEntry[]): Logger {
  return {
    info: (m) => { if (/^\s+\[[^\]]+\] (systemctl|write|mark|clear)/.test(m) || /^\s+(etcd healthy|ready:|kube-\S+ Lease held)/.test(m)) into.push({ at: iso(), event: m.trim() }); log.info(m); },
    warn: (m) => log.warn(m),
    step: (m) => log.step(m),
  };
}

export async function certExpiryDrill(inv: Inventory, stateDir: string, opts: DrillOptions, log: Logger): Promise<DrillReport> {
  const def = DEFS[opts.target];
  const timeline: TimelineEntry[] = [];
  const mark = (event: string) => { timeline.push({ at: iso(), event }); log.info(`  ${event}`); };
  const ctx = newContext(inv, stateDir, clusterStateDir(stateDir, inv), { dryRun: false, acceptNewHostKeys: false, gateTimeoutMs: opts.gateTimeoutMs }, log);
  await connectPhase.run(ctx);
  try {
    return await drill(ctx, def, opts, timeline, mark);
  } finally {
    await connectPhase.cleanup!(ctx);
  }
}

async function drill(ctx: WireContext, def: TargetDef, opts: DrillOptions, timeline: TimelineEntry[], mark: (e: string) => void): Promise<DrillReport> {
  const { inv, stateDir, log } = ctx;
  const creds = adminCreds(ctx.clusterDir);
  const via = ctx.sessions.get(inv.etcdHosts[0]!.name)!;
  const s = (h: string) => ctx.sessions.get(h)!;

  // 1. Baseline.
  log.step(`Baseline: every gate green, CA fingerprints, Lease renew times`);
  const baseGates = await gates(inv, creds, via);
  const red = baseGates.filter((g) => !g.ok);
  if (red.length > 0) throw new StepError('drill baseline', `the cluster is not healthy before the drill; run "hardwire wire" first`, { detail: red.map((g) => `${g.name}: ${g.detail}`) });
  const caBefore = caFingerprints(stateDir, inv).certs;
  const check0 = await checkHosts(inv, ctx.sessions);
  const spec0 = specsFor(inv, [def.leafId]);
  const caId = spec0[0]!.ca;
  const remoteCaMismatch = check0.cas.filter((c) => c.fingerprint !== caBefore[c.name as CaId]);
  if (remoteCaMismatch.length > 0) throw new StepError('drill baseline', 'a CA on a host differs from the operator copy; run "hardwire wire" first', { detail: remoteCaMismatch.map((c) => `${c.host} ${c.path} ${c.fingerprint}`) });
  const baseline = {
    at: iso(), gates: baseGates, caFingerprints: caBefore,
    remoteCaFingerprints: check0.cas.map((c) => ({ host: c.host, ca: c.name, fingerprint: c.fingerprint })),
    leases: leasesOf(baseGates),
  };
  mark(`baseline green (${baseGates.length} gates); ${caId} ${caBefore[caId]}`);

  // 2. Break: a cert from the real CA, same subject/SANs/usages and key as the operator copy.
  const hosts: Host[] = def.where === 'first-etcd' ? [inv.etcdHosts[0]!] : inv.hosts.filter((h) => remoteCerts(inv, h).some((c) => c.leafId === def.leafId));
  log.step(`Break: stop ${def.component}, install a ${def.cert} cert ${opts.mode === 'expired' ? 'that has already expired' : `valid for ${opts.windowS} s`} on ${hosts.map((h) => h.name).join(', ')}, start it`);
  const dir = pkiDir(stateDir, inv);
  const ca = loadSigner(stateDir, inv, caId);
  const files: string[] = [];
  // Stop first (a kube-apiserver drains for up to 60 s), so the window starts when the component loads the cert.
  await Promise.all(hosts.map((h) => ctx.wet.run(h.name, `systemctl stop ${def.component}.service`, () => s(h.name).exec(['systemctl', 'stop', `${def.component}.service`], { timeoutMs: 180_000 }))));
  mark(`${def.component} stopped on ${hosts.map((h) => h.name).join(', ')}`);
  const now = Date.now();
  const win: Window = opts.mode === 'expired'
    ? { notBefore: new Date(now - 2 * 3600_000), notAfter: new Date(now - 3600_000) }
    : { notBefore: new Date(now - 60_000), notAfter: new Date(now + opts.windowS * 1000) };
  const installedAt = Date.now();
  await Promise.all(hosts.map(async (h) => {
    const spec = spec0.find((x) => !x.host || x.host === h.name)!;
    const certPem = readFileSync(join(dir, `${spec.file}.crt`), 'utf8');
    const keyPem = readFileSync(join(dir, `${spec.file}.key`), 'utf8');
    const broken = await issueLeaf(keptSpec(spec, certPem), ca, win, { key: { keyPem, publicPem: publicPemOf(keyPem) } });
    const rc = remoteCerts(inv, h).find((c) => c.leafId === def.leafId)!;
    if (rc.embedded) {
      const k = KUBECONFIGS.find((x) => x.file === rc.name)!;
      const yaml = kubeconfigYaml({ cluster: inv.cluster.name, server: kubeconfigServer(k, inv.endpoint), caPem: loadSigner(stateDir, inv, 'ca').certPem, certPem: broken.certPem, keyPem, user: k.cn });
      await ctx.wet.run(h.name, `write ${K}/${k.file} with the short-lived client cert (same key)`, () => s(h.name).writeFileAtomic(rc.path, yaml, { mode: 0o600, owner: 'root:root' }));
    } else {
      await ctx.wet.run(h.name, `write ${rc.path} (short-lived, same key)`, () => s(h.name).writeFileAtomic(rc.path, broken.certPem, { mode: 0o644, owner: 'root:root' }));
    }
    files.push(`${h.name}:${rc.path}`);
  }));
  mark(`installed ${def.cert} valid ${iso(win.notBefore)} .. ${iso(win.notAfter)} on ${hosts.map((h) => h.name).join(', ')}`);
  const restart = async (verb: 'start' | 'restart', why: string) => {
    // In parallel: this is the break, not a roll; the roll comes with the recovery.
    // --no-block: etcd is Type=notify, and a member whose peer cert is rejected never reports ready,
    // so a blocking start would wait out TimeoutStartSec instead of letting the drill observe.
    await Promise.all(hosts.map((h) => ctx.wet.run(h.name, `systemctl ${verb} ${def.component}.service (${why})`, () => s(h.name).exec(['systemctl', verb, '--no-block', `${def.component}.service`], { timeoutMs: 180_000 }))));
  };
  await restart('start', 'load the short-lived cert');
  const loadedAt = Date.now();
  mark(`${def.component} started on ${hosts.map((h) => h.name).join(', ')}: it now presents the ${opts.mode === 'expired' ? 'expired' : 'short-lived'} cert`);
  let invalidFrom = opts.mode === 'expired' ? loadedAt : win.notAfter.getTime();
  if (opts.mode === 'window') {
    log.step(`Wait out the window: ${Math.max(0, Math.round((invalidFrom - Date.now()) / 1000))} s until ${iso(invalidFrom)}`);
    while (Date.now() < invalidFrom) await sleep(Math.min(1000, invalidFrom - Date.now()));
    mark(`the ${def.cert} cert expired`);
  }

  // 3. Observe: the first real x509 line per host and unit, and the symptom.
  log.step(`Observe: journals of ${def.logUnits.join(', ')} (first x509 line), and the symptom (${def.symptom})`);
  const logHosts = (u: ComponentName) => inv.hosts.filter((h) => (u === 'etcd' ? h.isEtcd : h.isControlPlane));
  const captured = new Map<string, Captured>();
  const related = new Map<string, Captured>();
  let symptom: DrillReport['symptom'] = null;
  let reconnectForced: { at: string; why: string } | undefined;
  const since = opts.mode === 'expired' ? installedAt : invalidFrom - 1000;
  const deadline = () => invalidFrom + opts.observeTimeoutMs;
  for (;;) {
    await Promise.all(def.logUnits.flatMap((u) => logHosts(u).map(async (h) => {
      const key = `${h.name}/${u}`;
      if (!captured.has(key)) {
        const c = await firstLine(s(h.name), h.name, u, since, 'x509');
        if (c) { captured.set(key, c); mark(`x509 in ${u} on ${h.name} at ${c.at}`); }
      }
      if (u === def.component && !related.has(key)) {
        const c = await firstLine(s(h.name), h.name, u, since, 'Unauthorized|certificate|tls:');
        if (c) related.set(key, c);
      }
    })));
    if (!symptom) {
      const sym = await symptomNow(def, inv, creds, via).catch((e: unknown) => `could not read the symptom: ${errText(e)}`);
      if (sym && !sym.startsWith('could not read')) { symptom = { kind: def.symptom, detail: sym, at: iso() }; mark(`symptom: ${sym}`); }
    }
    if (symptom && captured.size > 0) break;
    // A client cert is checked at the TLS handshake: a connection opened while the cert was valid
    // stays up after it expires. If nothing shows, force the reconnect a restart or reboot would.
    if (opts.mode === 'window' && !reconnectForced && !symptom && Date.now() > invalidFrom + 30_000) {
      const why = `no symptom 30 s after expiry: ${def.component} keeps the connections it opened while the cert was valid, and TLS checks a cert only at the handshake; restart it, as the next reboot or crash would`;
      await restart('restart', 'reconnect with the expired cert');
      reconnectForced = { at: iso(), why };
      invalidFrom = Date.now();
      mark(`restarted ${def.component}: ${why}`);
      continue;
    }
    if (Date.now() > deadline()) break;
    await sleep(2000);
  }
  const detectedAt = symptom && captured.size > 0 ? Math.max(new Date(symptom.at).getTime(), Math.min(...[...captured.values()].map((c) => new Date(c.at).getTime()))) : undefined;
  const check1 = await checkHosts(inv, ctx.sessions);
  const checkAfterBreak = check1.certs.filter((c) => c.name === def.cert);
  mark(`certs check: ${checkAfterBreak.map((c) => `${c.host} ${c.status}`).join(', ')}`);

  // 4. Recover, in order.
  log.step('Recover: renew from the unchanged CA, restart readers in order, wait for every gate');
  const recovery: DrillReport['recovery'] = [];
  const t0 = Date.now();
  recovery.push({ step: `renew ${def.cert} in the operator PKI from the existing ${caId} (subject, SANs, usages and key kept)`, why: 'the CA is not the problem and must not change: every other cert and every host trusts it; only the leaf is reissued', at: iso() });
  await renewOperatorCopies(stateDir, inv, [def.leafId], { newKey: false, log });
  recovery.push({ step: `push ${def.cert} to ${hosts.map((h) => h.name).join(', ')} atomically; restart ${def.component} where it runs, one host at a time, each followed by its gate (start it where it is down); then every gate`, why: `${def.component} reads the file only at start; wire's order (etcd, kube-apiserver, controllers) restarts a dependency before its clients, and one host at a time keeps quorum and a ready apiserver`, at: iso() });
  const wireLog: TimelineEntry[] = [];
  await pushRenewed(inv, stateDir, [def.leafId], { restart: true, gateTimeoutMs: opts.gateTimeoutMs, acceptNewHostKeys: false, log: recording(log, wireLog) });
  for (const e of wireLog) recovery.push({ step: e.event, why: 'wire roll', at: e.at });
  timeline.push(...wireLog);
  const finalGates = await gates(inv, creds, via);
  const recovered = finalGates.every((g) => g.ok);
  const timeToRecoverMs = Date.now() - t0;
  let confirmation = '';
  if (def.symptom === 'lease-not-renewing') {
    const l = await readLease(creds, def.component);
    confirmation = `Lease kube-system/${def.component} held by ${l.holder}, renewed ${l.renewTime} (was stuck at ${symptom?.detail.match(/last renewed (\S+)/)?.[1] ?? '?'})`;
  } else if (def.symptom === 'readyz-etcd-failing') {
    confirmation = (await readyzEtcd(inv, creds)) ?? `/readyz [+]etcd ok on ${inv.controlPlaneHosts.map((h) => h.name).join(', ')}`;
  } else {
    confirmation = finalGates.map((g) => `${g.ok ? 'ok' : 'FAIL'} ${g.name}`).join('; ');
  }
  recovery.push({ step: 'confirm', why: confirmation, at: iso() });
  mark(`recovered=${recovered} in ${(timeToRecoverMs / 1000).toFixed(1)} s; ${confirmation}`);

  // 5. The CA did not change, on the operator side or on any host.
  const caAfter = caFingerprints(stateDir, inv).certs;
  const check2 = await checkHosts(inv, ctx.sessions);
  const remoteSame = check2.cas.every((c) => c.fingerprint === caAfter[c.name as CaId]);
  const unchanged = JSON.stringify(caBefore) === JSON.stringify(caAfter) && remoteSame;

  return {
    target: opts.target, mode: opts.mode,
    window: { notBefore: iso(win.notBefore), notAfter: iso(win.notAfter) },
    baseline,
    broken: { hosts: hosts.map((h) => h.name), files, installedAt: iso(installedAt), loadedAt: iso(loadedAt), invalidFrom: iso(invalidFrom), ...(reconnectForced ? { reconnectForced } : {}) },
    whoLogs: def.whoLogs,
    captured: [...captured.values()].sort((a, b) => a.at.localeCompare(b.at)),
    related: [...related.values()].sort((a, b) => a.at.localeCompare(b.at)),
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
    timeline: timeline.sort((a, b) => a.at.localeCompare(b.at)),
  };
}

export function targetDef(t: Target): { cert: string; component: string; whoLogs: string } {
  return DEFS[t];
}

/** The Markdown report. Log lines are quoted as captured (trimmed to 400 characters). */
export function drillMarkdown(r: DrillReport): string {
  const trim = (l: string) => (l.length > 400 ? `${l.slice(0, 400)}…` : l);
  const s = (ms: number | null) => (ms === null ? 'not detected' : `${(ms / 1000).toFixed(1)} s`);
  return [
    `# Drill 3.C5: expired certificate — ${r.target} (${r.mode})`,
    '',
    `- Broken: ${r.broken.hosts.join(', ')}; cert valid ${r.window?.notBefore} .. ${r.window?.notAfter}; invalid from ${r.broken.invalidFrom}`,
    ...(r.broken.reconnectForced ? [`- Reconnect forced at ${r.broken.reconnectForced.at}: ${r.broken.reconnectForced.why}`] : []),
    `- Time to detect: ${s(r.timeToDetectMs)}; time to recover: ${s(r.timeToRecoverMs)}; recovered: ${r.recovered ? 'yes' : 'NO'}`,
    `- CA ${r.caFingerprint.ca} fingerprint before ${r.caFingerprint.before}, after ${r.caFingerprint.after}: ${r.caFingerprint.unchanged ? 'unchanged' : 'CHANGED'}`,
    '',
    '## Captured from the journal',
    '',
    r.whoLogs,
    '',
    ...(r.captured.length ? r.captured.map((c) => `- ${c.at} ${c.host} ${c.unit}\n\n  \`\`\`\n  ${trim(c.line)}\n  \`\`\``) : ['(no x509 line was found)']),
    ...(r.related.length ? ['', 'Related lines from the component itself:', '', ...r.related.map((c) => `- ${c.at} ${c.host} ${c.unit}: \`${trim(c.line)}\``)] : []),
    '',
    '## Symptom',
    '',
    r.symptom ? `${r.symptom.at} ${r.symptom.kind}: ${r.symptom.detail}` : '(not observed)',
    '',
    '## certs check after the break',
    '',
    '| host | file | expires | status |',
    '|---|---|---|---|',
    ...r.checkAfterBreak.map((c) => `| ${c.host} | ${c.path} | ${c.notAfter ?? '-'} | ${c.status} |`),
    '',
    '## Recovery, in order',
    '',
    ...r.recovery.map((x, i) => `${i + 1}. ${x.at} ${x.step}${x.why === 'wire roll' ? '' : ` — ${x.why}`}`),
    '',
    '## Timeline',
    '',
    ...r.timeline.map((t) => `- ${t.at} ${t.event}`),
    '',
  ].join('\n');
}
