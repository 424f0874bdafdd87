// Drill 3.C3: starve one API Priority and Fairness priority level. A client identity issued from
// the cluster CA (the CA itself untouched) is sent by a FlowSchema to a priority level with one
// concurrency share, one queue and a queue length of one, then floods the apiserver, bounded in
// count and time. Its requests queue and get 429s naming that FlowSchema and priority level,
// while the admin and the controller-manager's Lease renewals go through other levels untouched.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Inventory } from '../../../core/inventory/load.ts';
import type { Logger } from '../../../lib/log.ts';
import { StepError } from '../../../lib/errors.ts';
import { lastSeen, retry, Seen } from '../../../lib/retry.ts';
import { APISERVER_PORT } from '../../../lib/constants.ts';
import { AUDIT_LOG_PATH } from '../../../core/components/models/audit-policy.ts';
import {
  credsFromKubeconfig,
  kubeRequest,
  withServer,
  type KubeCreds,
} from '../../../core/transport/kube-api.ts';
import { issueLeaf, windowFor } from '../../../core/pki/issue.ts';
import { kubeconfigYaml } from '../../../core/pki/kubeconfig.ts';
import { caFingerprints, loadSigner } from '../../../core/certs/renew.ts';
import { readLease } from '../../../core/gates/leases.ts';
import { session } from '../../../core/apply/context.ts';
import {
  apply,
  baseline,
  gates,
  iso,
  kubectl,
  LABEL,
  remove,
  sleep,
  withDrillCtx,
  type ApiDrillOptions,
  type DrillCtx,
  type KubectlRun,
} from './common.ts';
import { flood, metricSum, stats, timedRequest, type Timed } from './flood.ts';
import { probe, type ApiDrillReport, type CapturedLine } from './report.ts';
import { traceLine } from '../trace.ts';
import type { RecoveryStep } from '../report.ts';

export const USER = 'hardwire:drill:flooder';
export const PL = 'hardwire-drill-starved';
export const FS = 'hardwire-drill-flooder';
const RBAC = 'hardwire-drill-flooder';
const FC = '/apis/flowcontrol.apiserver.k8s.io/v1';
const RB = '/apis/rbac.authorization.k8s.io/v1';
// The flood lasts until the drill has produced what it reports (kubectl as the flooder met 429s,
// at least minMs of load, two Lease renewals and four admin requests seen under it), and no longer:
// a 429 is answered in milliseconds, so a flood bounded only by count could end before a kubectl,
// slow to start on a loaded machine, sent anything. Bounded whatever happens: count and deadline.
export const FLOOD = {
  count: 100_000,
  sockets: 40,
  minMs: 6_000,
  deadlineMs: 60_000,
  path: '/api/v1/configmaps',
};
const WANT = { renewals: 2, adminRequests: 4 };
export const REJECTED = 'apiserver_flowcontrol_rejected_requests_total';
const ENQUEUED = 'apiserver_flowcontrol_request_queue_length_after_enqueue_count';

const OBJECTS = [
  `${FC}/flowschemas/${FS}`,
  `${FC}/prioritylevelconfigurations/${PL}`,
  `${RB}/clusterrolebindings/${RBAC}`,
  `${RB}/clusterroles/${RBAC}`,
];

async function cleanup(d: DrillCtx): Promise<void> {
  for (const p of OBJECTS) await remove(d.creds, p);
}

/** The APF counters for the drill's level, summed over every apiserver's /metrics. */
async function counters(d: DrillCtx): Promise<{ rejected: number; enqueued: number }> {
  let rejected = 0;
  let enqueued = 0;
  for (const h of d.inv.controlPlaneHosts) {
    const r = await kubeRequest(
      withServer(d.creds, `https://${h.address}:${APISERVER_PORT}`),
      'GET',
      '/metrics',
      { timeoutMs: 20_000 },
    );
    if (r.status !== 200)
      throw new StepError('drill metrics', `${h.name} /metrics returned ${r.status}`);
    rejected += metricSum(r.body, REJECTED, { flow_schema: FS, priority_level: PL });
    enqueued += metricSum(r.body, ENQUEUED, { flow_schema: FS, priority_level: PL });
  }
  return { rejected, enqueued };
}

/** The first audit event of a 429 for USER since `sinceMs`, from the audit log on each control-plane host. */
async function audit429(d: DrillCtx, sinceMs: number): Promise<CapturedLine | undefined> {
  for (const h of d.inv.controlPlaneHosts) {
    const r = await session(d.ctx, h.name).exec(
      ['grep', '-F', `"username":"${USER}"`, AUDIT_LOG_PATH],
      { allowFail: true, timeoutMs: 30_000 },
    );
    for (const line of r.stdout.split('\n')) {
      if (!line.includes('"code":429')) continue;
      const e = JSON.parse(line) as { requestReceivedTimestamp: string };
      if (Date.parse(e.requestReceivedTimestamp) >= sinceMs)
        return {
          source: 'audit-log',
          host: h.name,
          file: AUDIT_LOG_PATH,
          at: e.requestReceivedTimestamp,
          line,
          traces: [],
        };
    }
  }
  return undefined;
}

export async function apfDrill(
  inv: Inventory,
  stateDir: string,
  opts: ApiDrillOptions,
  log: Logger,
): Promise<ApiDrillReport> {
  return withDrillCtx(inv, stateDir, opts, log, 'apf-starve', async (d) => {
    const base = await baseline(d);
    await cleanup(d);
    return drill(d, base, opts);
  });
}

async function drill(
  d: DrillCtx,
  base: ApiDrillReport['baseline'],
  opts: ApiDrillOptions,
): Promise<ApiDrillReport> {
  const { creds, log, timeline, ctx } = d;
  log.step(
    `Set up: client cert ${USER} from the cluster CA, RBAC, FlowSchema ${FS} -> PriorityLevelConfiguration ${PL} (1 share, 1 queue of 1)`,
  );
  const caBefore = caFingerprints(ctx.stateDir, d.inv).certs.ca;
  const ca = loadSigner(ctx.stateDir, d.inv, 'ca');
  const leaf = await issueLeaf(
    {
      id: 'drill-flooder',
      file: 'drill-flooder',
      ca: 'ca',
      cn: USER,
      o: [],
      usage: 'client',
      dns: [],
      ips: [],
      why: 'the identity 3.C3 floods with',
      placements: [],
    },
    ca,
    windowFor(1),
  );
  const floodConf = join(d.dir, 'flooder.conf');
  mkdirSync(d.dir, { recursive: true, mode: 0o700 });
  // The key only ever sits in this 0600 kubeconfig (for --keep-broken pokes); it is never printed.
  writeFileSync(
    floodConf,
    kubeconfigYaml({
      cluster: d.inv.cluster.name,
      server: creds.server,
      caPem: ca.certPem,
      certPem: leaf.certPem,
      keyPem: leaf.keyPem,
      user: USER,
    }),
    { mode: 0o600 },
  );
  const flooder: KubeCreds = credsFromKubeconfig(floodConf);
  const labels = { [LABEL]: 'apf' };
  await apply(creds, `${RB}/clusterroles/${RBAC}`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: RBAC, labels },
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
  });
  await apply(creds, `${RB}/clusterrolebindings/${RBAC}`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: RBAC, labels },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: RBAC },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: USER }],
  });
  const pl = await apply(creds, `${FC}/prioritylevelconfigurations/${PL}`, {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'PriorityLevelConfiguration',
    metadata: { name: PL, labels },
    spec: {
      type: 'Limited',
      limited: {
        nominalConcurrencyShares: 1,
        lendablePercent: 0,
        limitResponse: { type: 'Queue', queuing: { queues: 1, handSize: 1, queueLengthLimit: 1 } },
      },
    },
  });
  const fs = await apply(creds, `${FC}/flowschemas/${FS}`, {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'FlowSchema',
    metadata: { name: FS, labels },
    spec: {
      priorityLevelConfiguration: { name: PL },
      matchingPrecedence: 500,
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects: [{ kind: 'User', user: { name: USER } }],
          resourceRules: [
            {
              verbs: ['*'],
              apiGroups: ['*'],
              resources: ['*'],
              namespaces: ['*'],
              clusterScope: true,
            },
          ],
          nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
        },
      ],
    },
  });
  const uid = (o: Record<string, unknown>) => (o.metadata as { uid: string }).uid;
  const fsUid = uid(fs);
  const plUid = uid(pl);
  // The APF config controller picks the objects up asynchronously: wait until a request lands there.
  const probe0 = await retry<Timed>(
    async () => {
      const t = await timedRequest(flooder, FLOOD.path);
      if (t.fsUid !== fsUid) throw new Seen(t);
      return t;
    },
    { timeoutMs: 60_000, intervalMs: 500, onTimeout: lastSeen },
  );
  if (probe0.status !== 200 || probe0.fsUid !== fsUid)
    throw new StepError(
      'drill setup',
      `a request as ${USER} did not land in FlowSchema ${FS} within 60 s (status ${probe0.status}, flowschema uid ${probe0.fsUid ?? '-'})`,
    );
  timeline.mark(
    `a single request as ${USER}: 200, X-Kubernetes-PF-FlowSchema-UID ${fsUid} (${FS}), PriorityLevel-UID ${probe0.plUid}`,
  );

  log.step(
    `Break: flood as ${USER}: LISTs of ${FLOOD.path}, ${FLOOD.sockets} at a time, until kubectl as ${USER} has met 429s (at least ${FLOOD.minMs / 1000} s, at most ${FLOOD.deadlineMs / 1000} s or ${FLOOD.count} requests); meanwhile the admin and the controller-manager's Lease`,
  );
  const c0 = await counters(d);
  const cm = withServer(
    credsFromKubeconfig(join(ctx.clusterDir, 'kubeconfigs', 'controller-manager.conf')),
    creds.server,
  );
  const leaseBefore = await readLease(creds, 'kube-controller-manager');
  const brokeAt = Date.now();
  let done = false;
  const admin: Timed[] = [];
  const controller: Timed[] = [];
  const renewals = new Set<string>();
  const side = (async () => {
    while (!done) {
      const [a, c] = await Promise.all([
        timedRequest(creds, '/api/v1/namespaces/kube-system'),
        timedRequest(
          cm,
          '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager',
        ),
      ]);
      admin.push(a);
      controller.push(c);
      renewals.add((await readLease(creds, 'kube-controller-manager')).renewTime);
      await sleep(250);
    }
  })();
  // kubectl as the flooder, run after run while the flood lasts, until one meets 429s (a run may
  // slip through between rejections); -v=6 prints each response status, 429s included.
  // client-go retries a 429 after its Retry-After, so kubectl fails or gets through late: either way it met 429s.
  const count429 = (r: KubectlRun) =>
    r.output.split('\n').filter((l) => /\b429 Too Many Requests\b/.test(l)).length;
  const met = (r: KubectlRun) => r.code !== 0 || count429(r) > 0;
  const kubectlRuns: KubectlRun[] = [];
  let flooding = true;
  const kubectlDuring = (async () => {
    while (flooding && !kubectlRuns.some(met)) {
      kubectlRuns.push(
        await kubectl(
          d,
          ['get', 'configmaps', '-A', '--request-timeout=5s', '-v=6'],
          undefined,
          floodConf,
        ),
      );
      await sleep(250);
    }
  })();
  const seenEnough = () =>
    Date.now() - brokeAt >= FLOOD.minMs &&
    kubectlRuns.some(met) &&
    admin.length >= WANT.adminRequests &&
    [...renewals].filter((x) => x && Date.parse(x) >= brokeAt).length >= WANT.renewals;
  const f = await flood(flooder, FLOOD.path, FLOOD, seenEnough);
  flooding = false;
  await kubectlDuring;
  done = true;
  await side;
  const c1 = await counters(d);
  const leaseAfter = await readLease(creds, 'kube-controller-manager');
  const got429 = f.byStatus['429'] ?? 0;
  timeline.mark(
    `flood done in ${f.ms} ms: ${JSON.stringify(f.byStatus)}; ${REJECTED} +${c1.rejected - c0.rejected}, enqueued +${c1.enqueued - c0.enqueued}`,
  );
  const captured: CapturedLine[] = [];
  if (f.first429)
    captured.push({
      source: 'response',
      at: f.first429.at,
      line: `HTTP 429 X-Kubernetes-PF-FlowSchema-UID: ${f.first429.fsUid} X-Kubernetes-PF-PriorityLevel-UID: ${f.first429.plUid} body: ${f.first429.body.trim()}`,
      traces: traceLine(f.first429.body),
    });
  const auditLine = await audit429(d, brokeAt);
  if (auditLine) captured.push(auditLine);
  const renewTimes = [...renewals].filter((x) => x && Date.parse(x) >= brokeAt).sort();
  // Gaps between consecutive renewals, from the last one before the flood to the first after it.
  const chain = [...new Set([leaseBefore.renewTime, ...renewTimes, leaseAfter.renewTime])].sort();
  const gaps = chain.slice(1).map((x, i) => Date.parse(x) - Date.parse(chain[i]!));
  const kubectl429 = kubectlRuns.reduce((n, r) => n + count429(r), 0);
  if (kubectlRuns.length === 0)
    throw new StepError(
      'drill symptom',
      `kubectl as ${USER} never ran during the flood (${f.sent} requests in ${f.ms} ms)`,
    );
  const symptomKubectl = kubectlRuns.find(met) ?? kubectlRuns.at(-1)!;
  const symptoms = [
    {
      ...probe(
        symptomKubectl,
        `kubectl as ${USER} during the flood meets 429s (client-go retries them, so it fails or is slow)`,
        'fails' as const,
      ),
      asExpected: met(symptomKubectl),
    },
  ];
  const fsName = async (u: string | undefined) => {
    const r = await kubeRequest(creds, 'GET', `${FC}/flowschemas`);
    return (
      (JSON.parse(r.body) as { items: { metadata: { name: string; uid: string } }[] }).items.find(
        (x) => x.metadata.uid === u,
      )?.metadata.name ?? '?'
    );
  };
  const stillWorks = [
    probe(
      await kubectl(d, ['get', '--raw', '/readyz']),
      'the admin, right after the flood',
      'works',
    ),
  ];
  const details = {
    identity: {
      user: USER,
      issuedBy: 'the cluster CA (pki/ca.crt), unchanged',
      kubeconfig: floodConf,
      caFingerprintBefore: caBefore,
    },
    flowSchema: { name: FS, uid: fsUid },
    priorityLevel: {
      name: PL,
      uid: plUid,
      nominalConcurrencyShares: 1,
      queues: 1,
      queueLengthLimit: 1,
    },
    flood: {
      ...FLOOD,
      sent: f.sent,
      byStatus: f.byStatus,
      ms: f.ms,
      latencyMs: f.latencyMs,
      rejectedWithOurHeaders: f.results.filter(
        (r) => r.status === 429 && r.fsUid === fsUid && r.plUid === plUid,
      ).length,
      // The 429s kubectl met during the flood (its -v=6 lines): /metrics counts those too.
      kubectl429,
      kubectlRuns: kubectlRuns.map((r) => ({
        at: r.at,
        code: r.code,
        ms: r.ms,
        met429: count429(r),
      })),
    },
    metrics: {
      [REJECTED]: { before: c0.rejected, after: c1.rejected, delta: c1.rejected - c0.rejected },
      [ENQUEUED]: { before: c0.enqueued, after: c1.enqueued, delta: c1.enqueued - c0.enqueued },
    },
    admin: {
      requests: admin.length,
      statuses: [...new Set(admin.map((a) => a.status))],
      latencyMs: stats(admin.map((a) => a.ms)),
      flowSchema: await fsName(admin[0]?.fsUid),
    },
    controllerLease: {
      requests: controller.length,
      statuses: [...new Set(controller.map((a) => a.status))],
      latencyMs: stats(controller.map((a) => a.ms)),
      flowSchema: await fsName(controller[0]?.fsUid),
      renewalsSeenDuringFlood: renewTimes.length,
      maxGapMs: gaps.length ? Math.max(...gaps) : null,
      before: leaseBefore.renewTime,
      after: leaseAfter.renewTime,
    },
    journal:
      'the apiserver logs an APF rejection only at -v=7 (apf_filter.go Handle ... reject); at the default verbosity the evidence is the 429 itself, its headers, the audit log and /metrics',
  };
  const detectedAt =
    f.first429 && auditLine ? Math.max(Date.parse(f.first429.at), Date.parse(auditLine.at)) : null;
  const recoverCommand = `kubectl --kubeconfig ${d.adminConf} delete flowschema ${FS} && kubectl --kubeconfig ${d.adminConf} delete prioritylevelconfiguration ${PL} && kubectl --kubeconfig ${d.adminConf} delete clusterrolebinding,clusterrole ${RBAC}   # flood again meanwhile with --kubeconfig ${floodConf}`;
  const report = (over: Partial<ApiDrillReport>): ApiDrillReport => ({
    drill: '3.C3',
    title: 'starve an APF priority level',
    baseline: base,
    broke: { at: iso(brokeAt), action: `flood as ${USER}: ${f.sent} requests in ${f.ms} ms` },
    captured,
    symptoms,
    stillWorks,
    recovery: [],
    recovered: false,
    finalGates: [],
    timeToDetectMs: detectedAt === null ? null : Math.max(0, Date.parse(f.first429!.at) - brokeAt),
    timeToRecoverMs: null,
    keptBroken: false,
    recoverCommand,
    details: { ...details, got429 },
    timeline: timeline.entries(),
    ...over,
  });
  if (opts.keepBroken) {
    timeline.mark(
      `--keep-broken: the FlowSchema and priority level stay; flood again with kubectl --kubeconfig ${floodConf}. Recover: ${recoverCommand}`,
    );
    return report({ keptBroken: true, timeline: timeline.entries(), finalGates: await gates(d) });
  }

  log.step('Recover: delete the FlowSchema, the priority level and the RBAC');
  const recovery: RecoveryStep[] = [];
  const step = (s: string, why: string) => {
    recovery.push({ step: s, why, at: iso() });
    timeline.mark(s);
  };
  const r0 = Date.now();
  await cleanup(d);
  step(
    `deleted flowschema ${FS}, prioritylevelconfiguration ${PL}, clusterrolebinding and clusterrole ${RBAC}`,
    'the starved level exists only for this drill; without its FlowSchema the identity falls back to the built-in schemas',
  );
  const after = await retry<Timed>(
    async () => {
      const t = await timedRequest(flooder, FLOOD.path);
      if (t.status !== 403) throw new Seen(t);
      return t;
    },
    { timeoutMs: 60_000, intervalMs: 500, onTimeout: lastSeen },
  );
  const timeToRecoverMs = Date.now() - r0;
  step(
    `a request as ${USER} now gets ${after.status} through FlowSchema ${after.fsUid === fsUid ? FS : await fsName(after.fsUid)} (403: its RBAC is gone too)`,
    'no request of that identity is classified into the deleted level any more',
  );
  const caAfter = caFingerprints(ctx.stateDir, d.inv).certs.ca;
  const finalGates = await gates(d);
  return report({
    recovery,
    finalGates,
    timeToRecoverMs,
    recovered:
      after.status === 403 &&
      after.fsUid !== fsUid &&
      caAfter === caBefore &&
      finalGates.every((g) => g.ok),
    details: { ...details, got429, caUnchanged: caAfter === caBefore },
    timeline: timeline.entries(),
  });
}
