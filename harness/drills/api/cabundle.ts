// Drill 3.C1: one flipped byte in a validating webhook's caBundle. The webhook is real (the
// drill's HTTPS server, drill CA) and registered with failurePolicy Fail on one namespace; after
// the flip the apiserver cannot verify the server, so every write it intercepts is refused,
// including the write that would fix the workload. Recovery is the escape hatch: webhook
// configurations are not subject to webhooks, so the admin patches (or deletes) it.
import forge from 'node-forge';
import type { Inventory } from '../../../core/inventory/load.ts';
import type { Logger } from '../../../lib/log.ts';
import { StepError } from '../../../lib/errors.ts';
import { lastSeen, retry, Seen } from '../../../lib/retry.ts';
import {
  apply,
  gates,
  iso,
  kubectl,
  LABEL,
  namespaceGone,
  remove,
  sleep,
  ApiserverJournal,
  type ApiDrillOptions,
  type DrillCtx,
  type KubectlRun,
} from './common.ts';
import { webhookDrill, type DrillServer } from './webhook-server.ts';
import { probe, type ApiDrillReport, type CapturedLine, type Probe } from './report.ts';
import { traceLine } from '../trace.ts';
import type { RecoveryStep } from '../report.ts';

export const NS = 'hw-drill-cabundle';
export const VWC = 'hardwire-drill-cabundle';
const HOOK = 'cabundle.drill.hardwire.dev';
/** The namespace label the selector excludes: the label-exclusion fix. */
export const EXEMPT = 'hardwire.dev/webhook-exempt';
const BAD_IMAGE = 'registry.k8s.io/pause:no-such-tag';
const GOOD_IMAGE = 'registry.k8s.io/pause:3.10';
const VWC_PATH = `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${VWC}`;

/**
 * One base64 character of the PEM changed, inside the CA's RSA modulus: the bundle still parses as
 * a certificate, but its public key no longer verifies the serving cert. (A flip in the CA's own
 * signature would change nothing: a root's signature is never checked.)
 */
export function flipOneByte(pem: string): { pem: string; index: number; from: string; to: string } {
  const cert = forge.pki.certificateFromPem(pem);
  let hex = (cert.publicKey as forge.pki.rsa.PublicKey).n.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  const der = Buffer.from(forge.asn1.toDer(forge.pki.certificateToAsn1(cert)).getBytes(), 'binary');
  const start = der.indexOf(Buffer.from(hex, 'hex').subarray(0, 32));
  if (start < 0) throw new StepError('drill break', 'cannot find the RSA modulus in the drill CA');
  const b64Index = Math.floor(((start + 64) * 4) / 3);
  // Position of that base64 character in the PEM text (skipping the header and newlines).
  const bodyStart = pem.indexOf('\n', pem.indexOf('-----BEGIN')) + 1;
  let seen = -1;
  let i = bodyStart;
  for (; i < pem.length; i++) if (pem[i] !== '\n' && ++seen === b64Index) break;
  const from = pem[i]!;
  const to = from === 'A' ? 'B' : 'A';
  return { pem: `${pem.slice(0, i)}${to}${pem.slice(i + 1)}`, index: i, from, to };
}

function webhookConfig(server: DrillServer, caPem: string): object {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: VWC, labels: { [LABEL]: 'cabundle' } },
    webhooks: [
      {
        name: HOOK,
        failurePolicy: 'Fail',
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        timeoutSeconds: 5,
        clientConfig: {
          url: `${server.base}/validate`,
          caBundle: Buffer.from(caPem).toString('base64'),
        },
        namespaceSelector: {
          matchExpressions: [
            { key: LABEL, operator: 'In', values: ['cabundle'] },
            { key: EXEMPT, operator: 'DoesNotExist' },
          ],
        },
        rules: [
          {
            apiGroups: [''],
            apiVersions: ['v1'],
            operations: ['CREATE', 'UPDATE'],
            resources: ['configmaps'],
            scope: 'Namespaced',
          },
          {
            apiGroups: ['apps'],
            apiVersions: ['v1'],
            operations: ['CREATE', 'UPDATE'],
            resources: ['deployments'],
            scope: 'Namespaced',
          },
        ],
      },
    ],
  };
}

async function cleanup(d: DrillCtx): Promise<void> {
  // The configuration first: with it gone, nothing in the namespace is held up by the webhook.
  await remove(d.creds, VWC_PATH);
  await remove(d.creds, `/api/v1/namespaces/${NS}`);
  await namespaceGone(d.creds, NS);
}

/** Retries a kubectl run until `ok`, for config that the apiserver's informers pick up a moment later. */
async function until(
  d: DrillCtx,
  args: () => string[],
  ok: (code: number) => boolean,
  timeoutMs: number,
) {
  return retry<KubectlRun>(
    async () => {
      const r = await kubectl(d, args());
      if (!ok(r.code)) throw new Seen(r);
      return r;
    },
    { timeoutMs, intervalMs: 1000, onTimeout: lastSeen },
  );
}

const seenBy = (server: DrillServer, name: string, after: string) =>
  server
    .lines()
    .some(
      (l) =>
        l.at >= after && l.line.includes(`AdmissionReview`) && l.line.includes(`${NS}/${name}`),
    );

export function cabundleDrill(
  inv: Inventory,
  stateDir: string,
  opts: ApiDrillOptions,
  log: Logger,
): Promise<ApiDrillReport> {
  return webhookDrill(
    inv,
    stateDir,
    opts,
    log,
    'webhook-cabundle',
    'cabundle',
    cleanup,
    (d, server, base) => drill(d, server, base, opts),
  );
}

async function drill(
  d: DrillCtx,
  server: DrillServer,
  base: ApiDrillReport['baseline'],
  opts: ApiDrillOptions,
): Promise<ApiDrillReport> {
  const { creds, log, timeline } = d;
  log.step(
    `Set up: namespace ${NS}, webhook ${HOOK} (failurePolicy Fail) at ${server.base}/validate, serving cert from a drill CA`,
  );
  await apply(creds, `/api/v1/namespaces/${NS}`, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: NS, labels: { [LABEL]: 'cabundle' } },
  });
  await apply(creds, VWC_PATH, webhookConfig(server, server.caPem));
  // The apiserver loads webhook configurations through an informer: write until the server sees one.
  const t0 = iso();
  let n = 0;
  const admitted = await until(
    d,
    () => ['-n', NS, 'create', 'configmap', `admission-probe-${++n}`, '--from-literal=probe=1'],
    (c) => c === 0 && seenBy(server, `admission-probe-${n}`, t0),
    60_000,
  );
  if (!seenBy(server, `admission-probe-${n}`, t0))
    throw new StepError(
      'drill setup',
      `the webhook never saw a write in ${NS} within 60 s (is ${server.base} reachable from every apiserver?)`,
      { detail: [admitted.output, ...server.lines().map((l) => l.line)] },
    );
  const deploy = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'app', namespace: NS },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'app' } },
      template: {
        metadata: { labels: { app: 'app' } },
        spec: { containers: [{ name: 'app', image: BAD_IMAGE }] },
      },
    },
  };
  await apply(creds, `/apis/apps/v1/namespaces/${NS}/deployments/app`, deploy);
  timeline.mark(
    `webhook admits writes: ${server.lines().filter((l) => l.line.includes('AdmissionReview')).length} AdmissionReview(s) in its log; Deployment app has the wrong image ${BAD_IMAGE}`,
  );

  log.step('Break: flip one byte of caBundle');
  const flip = flipOneByte(server.caPem);
  const brokeAt = Date.now();
  await apply(creds, VWC_PATH, webhookConfig(server, flip.pem));
  const action = `caBundle of ${VWC}/${HOOK}: PEM character ${flip.index} '${flip.from}' -> '${flip.to}' (inside the drill CA's RSA modulus)`;
  timeline.mark(`broke: ${action}`);

  log.step(
    'Observe: the apiserver journal, the webhook server log, kubectl writes in the namespace',
  );
  const journal = new ApiserverJournal(d, 'Failed calling webhook', brokeAt);
  const fix = () => ['-n', NS, 'set', 'image', 'deployment/app', `app=${GOOD_IMAGE}`];
  let refused: Probe | undefined;
  const end = brokeAt + opts.observeTimeoutMs;
  while (Date.now() < end) {
    const r = await kubectl(d, fix());
    if (r.code !== 0 && !refused) {
      refused = probe(
        r,
        'the write that fixes the workload (set the right image) is refused',
        'fails',
      );
      timeline.mark(`symptom: ${r.output.split('\n')[0]}`);
    }
    for (const l of await journal.poll()) timeline.mark(`journal: ${l.host} ${l.at}`);
    if (refused && journal.lines().length > 0) break;
    // Informer lag: this write went through with the old bundle. Put the bad image back.
    if (r.code === 0) await apply(creds, `/apis/apps/v1/namespaces/${NS}/deployments/app`, deploy);
    await sleep(1000);
  }
  const lines = journal.lines();
  const detectedAt =
    refused && lines.length ? Math.max(Date.parse(refused.at), Date.parse(lines[0]!.at)) : null;
  const captured: CapturedLine[] = lines.map((l) => ({
    source: 'journal',
    host: l.host,
    unit: l.unit,
    at: l.at,
    line: l.line,
    traces: traceLine(l.line),
  }));
  const tls = server
    .lines()
    .find((l) => Date.parse(l.at) >= brokeAt && l.line.includes('TLS handshake failed'));
  if (tls)
    captured.push({
      source: 'webhook-server',
      file: server.logFile,
      at: tls.at,
      line: tls.line,
      traces: [],
    });
  const symptoms: Probe[] = [
    ...(refused ? [refused] : []),
    probe(
      await kubectl(d, ['-n', NS, 'create', 'configmap', 'during-break', '--from-literal=a=b']),
      `any intercepted write in ${NS} is refused`,
      'fails',
    ),
  ];
  const stillWorks: Probe[] = [
    probe(
      await kubectl(d, [
        '-n',
        NS,
        'get',
        'deployment',
        'app',
        '-o',
        'jsonpath={.spec.template.spec.containers[0].image}',
      ]),
      'reads in the namespace (the webhook only intercepts CREATE/UPDATE)',
      'works',
    ),
    probe(
      await kubectl(d, [
        '-n',
        'default',
        'create',
        'configmap',
        'hw-drill-cabundle-elsewhere',
        '--from-literal=a=b',
      ]),
      'writes in other namespaces (not selected)',
      'works',
    ),
    probe(
      await kubectl(d, ['-n', 'default', 'delete', 'configmap', 'hw-drill-cabundle-elsewhere']),
      'and their cleanup',
      'works',
    ),
    probe(await kubectl(d, ['get', '--raw', '/readyz']), 'the apiserver itself', 'works'),
  ];
  const recoverCommand = `kubectl --kubeconfig ${d.adminConf} delete validatingwebhookconfiguration ${VWC} && kubectl --kubeconfig ${d.adminConf} delete namespace ${NS}   # or re-run: hardwire drill webhook-cabundle`;
  const report = (over: Partial<ApiDrillReport>): ApiDrillReport => ({
    drill: '3.C1',
    title: 'corrupt a webhook caBundle',
    baseline: base,
    broke: { at: iso(brokeAt), action },
    captured,
    symptoms,
    stillWorks,
    recovery: [],
    recovered: false,
    finalGates: [],
    timeToDetectMs: detectedAt === null ? null : detectedAt - brokeAt,
    timeToRecoverMs: null,
    keptBroken: false,
    recoverCommand,
    details: {},
    timeline: timeline.entries(),
    ...over,
  });
  if (opts.keepBroken) {
    timeline.mark(
      `--keep-broken: stopping here (the drill's server stops with this process, so calls now fail to connect as well). Recover: ${recoverCommand}`,
    );
    return report({ keptBroken: true, timeline: timeline.entries(), finalGates: await gates(d) });
  }

  log.step('Label-exclusion fix: exempt the namespace, apply the fix, take the exemption back');
  const recovery: RecoveryStep[] = [];
  const step = (s: string, why: string) => {
    recovery.push({ step: s, why, at: iso() });
    timeline.mark(s);
  };
  const labelled = await kubectl(d, ['label', 'namespace', NS, `${EXEMPT}=true`]);
  step(
    `kubectl label namespace ${NS} ${EXEMPT}=true (exit ${labelled.code})`,
    'the selector excludes namespaces with this label, so the apiserver no longer calls the webhook for them; the namespace object itself is not intercepted, so this write is allowed',
  );
  const fixedByLabel = probe(
    await until(d, fix, (c) => c === 0, 20_000),
    'with the namespace exempted, the fix goes through (without any webhook check)',
    'works',
  );
  stillWorks.push(fixedByLabel);
  await kubectl(d, ['label', 'namespace', NS, `${EXEMPT}-`]);
  step(
    `kubectl label namespace ${NS} ${EXEMPT}- (the exemption is a policy bypass: take it back)`,
    'the exemption skips the policy the webhook enforces, so it is a stopgap, not the fix',
  );

  log.step(
    'Recover with the escape hatch: patch the webhook configuration (not itself subject to webhooks)',
  );
  const r0 = Date.now();
  await apply(d.creds, VWC_PATH, webhookConfig(server, server.caPem));
  step(
    `patch ${VWC}: caBundle back to the drill CA`,
    'ValidatingWebhookConfiguration writes never go through admission webhooks, so the admin can always fix or delete a broken one',
  );
  const t1 = iso();
  let m = 0;
  const after = await until(
    d,
    () => ['-n', NS, 'create', 'configmap', `after-recovery-${++m}`, '--from-literal=a=b'],
    (c) => c === 0 && seenBy(server, `after-recovery-${m}`, t1),
    60_000,
  );
  const admittedAgain = after.code === 0 && seenBy(server, `after-recovery-${m}`, t1);
  const timeToRecoverMs = Date.now() - r0;
  step(
    `a write in ${NS} is admitted by the webhook again (${admittedAgain ? 'its log shows the AdmissionReview' : 'NOT seen'})`,
    'recovered means the webhook is called and allows, not merely that writes pass',
  );
  await cleanup(d);
  step(`deleted ${VWC} and namespace ${NS}`, 'the drill leaves the cluster as it found it');
  const finalGates = await gates(d);
  return report({
    recovery,
    recovered: admittedAgain && fixedByLabel.asExpected && finalGates.every((g) => g.ok),
    finalGates,
    timeToRecoverMs,
    details: {
      webhook: `${server.base}/validate`,
      serverLog: server.logFile,
      flip: { index: flip.index, from: flip.from, to: flip.to },
      admissionReviews: server.lines().filter((l) => l.line.includes('AdmissionReview')).length,
    },
    timeline: timeline.entries(),
  });
}
