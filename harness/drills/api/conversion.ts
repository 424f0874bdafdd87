// Drill 3.C2: a conversion webhook that returns garbage. A CRD serves v1 (stored) and v2, and the
// drill's HTTPS webhook converts between them. When the webhook starts returning objects of the
// wrong group/version, every read that needs a conversion fails, for that resource type only:
// other types, another CRD included, read as before. Recovery fixes the webhook; the objects,
// which never left etcd in v1, read back unchanged.
import type { Inventory } from '../../../core/inventory/load.ts';
import type { Logger } from '../../../lib/log.ts';
import { StepError } from '../../../lib/errors.ts';
import { lastSeen, retry, Seen } from '../../../lib/retry.ts';
import { kubeRequest } from '../../../core/transport/kube-api.ts';
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
import { GROUP } from './convert-objects.ts';
import type { RecoveryStep } from '../report.ts';

export const NS = 'hw-drill-conversion';
export const CRD = `thermos.${GROUP}`;
export const OTHER_CRD = `notes.${GROUP}`;
const CRD_PATH = (n: string) => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${n}`;
const obj = { type: 'object' } as const;

function thermoCrd(server: DrillServer): object {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: CRD, labels: { [LABEL]: 'conversion' } },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'thermos', singular: 'thermo', kind: 'Thermo' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              ...obj,
              properties: { spec: { ...obj, properties: { celsius: { type: 'number' } } } },
            },
          },
        },
        {
          name: 'v2',
          served: true,
          storage: false,
          schema: {
            openAPIV3Schema: {
              ...obj,
              properties: {
                spec: {
                  ...obj,
                  properties: {
                    temperature: {
                      ...obj,
                      properties: {
                        value: { type: 'number' },
                        unit: { type: 'string', enum: ['C', 'F'] },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      ],
      conversion: {
        strategy: 'Webhook',
        webhook: {
          conversionReviewVersions: ['v1'],
          clientConfig: {
            url: `${server.base}/convert`,
            caBundle: Buffer.from(server.caPem).toString('base64'),
          },
        },
      },
    },
  };
}

const noteCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: OTHER_CRD, labels: { [LABEL]: 'conversion' } },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'notes', singular: 'note', kind: 'Note' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            ...obj,
            properties: { spec: { ...obj, properties: { text: { type: 'string' } } } },
          },
        },
      },
    ],
  },
};

async function cleanup(d: DrillCtx): Promise<void> {
  // A leftover from --keep-broken points at a webhook that is gone: switch it to None first, so the
  // deletions (which list the objects) do not need it.
  const r = await kubeRequest(d.creds, 'PATCH', CRD_PATH(CRD), {
    body: { spec: { conversion: { strategy: 'None', webhook: null } } },
    contentType: 'application/merge-patch+json',
  });
  if (r.status !== 200 && r.status !== 404)
    throw new StepError(
      'drill cleanup',
      `cannot set ${CRD} conversion to None: ${r.status} ${r.body.slice(0, 300)}`,
    );
  await remove(d.creds, `/api/v1/namespaces/${NS}`);
  await namespaceGone(d.creds, NS);
  for (const c of [CRD, OTHER_CRD]) await remove(d.creds, CRD_PATH(c));
  for (const c of [CRD, OTHER_CRD]) {
    await retry(
      async () => {
        if ((await kubeRequest(d.creds, 'GET', CRD_PATH(c))).status !== 404)
          throw new StepError('drill cleanup', `CRD ${c} still exists after 60 s`);
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
  }
}

/** Applies until it works: a CRD just established takes a moment to serve (and to convert). */
async function applyRetry(
  d: DrillCtx,
  path: string,
  body: object,
): Promise<Record<string, unknown>> {
  return retry(() => apply(d.creds, path, body), { timeoutMs: 60_000, intervalMs: 1000 });
}

/** The entries of `all` that `like` has: the objects written before the break. */
const pick = <T>(all: Record<string, T>, like: Record<string, unknown>) =>
  Object.fromEntries(Object.keys(like).map((k) => [k, all[k]]));

type Thermo = { metadata: { name: string; uid: string; resourceVersion: string }; spec: unknown };
async function readAll(
  d: DrillCtx,
  version: string,
): Promise<Record<string, { uid: string; resourceVersion: string; spec: unknown }>> {
  const r = await kubectl(d, ['-n', NS, 'get', `thermos.${version}.${GROUP}`, '-o', 'json']);
  if (r.code !== 0) throw new StepError('drill read', r.output);
  const items = (JSON.parse(r.output) as { items: Thermo[] }).items;
  return Object.fromEntries(
    items.map((i) => [
      i.metadata.name,
      { uid: i.metadata.uid, resourceVersion: i.metadata.resourceVersion, spec: i.spec },
    ]),
  );
}

export function conversionDrill(
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
    'conversion-webhook',
    'conversion',
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
    `Set up: CRD ${CRD} (v1 stored, v2 served) converted by ${server.base}/convert; CRD ${OTHER_CRD} (no conversion)`,
  );
  await apply(creds, `/api/v1/namespaces/${NS}`, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: NS, labels: { [LABEL]: 'conversion' } },
  });
  await apply(creds, CRD_PATH(CRD), thermoCrd(server));
  await apply(creds, CRD_PATH(OTHER_CRD), noteCrd);
  const t = (name: string, v: 'v1' | 'v2', spec: object) =>
    applyRetry(d, `/apis/${GROUP}/${v}/namespaces/${NS}/thermos/${name}`, {
      apiVersion: `${GROUP}/${v}`,
      kind: 'Thermo',
      metadata: { name, namespace: NS },
      spec,
    });
  await t('written-as-v1', 'v1', { celsius: 21.5 });
  await t('written-as-v2', 'v2', { temperature: { value: 70, unit: 'F' } });
  await applyRetry(d, `/apis/${GROUP}/v1/namespaces/${NS}/notes/control`, {
    apiVersion: `${GROUP}/v1`,
    kind: 'Note',
    metadata: { name: 'control', namespace: NS },
    spec: { text: 'another CRD, no conversion' },
  });
  const before = { v1: await readAll(d, 'v1'), v2: await readAll(d, 'v2') };
  const reviews = server.lines().filter((l) => l.line.includes('ConversionReview')).length;
  if (reviews === 0)
    throw new StepError(
      'drill setup',
      `the conversion webhook was never called (is ${server.base} reachable from every apiserver?)`,
    );
  timeline.mark(
    `objects written in v1 and v2, read back in both; ${reviews} ConversionReview(s) in the webhook's log`,
  );

  log.step('Break: the webhook returns garbage (objects of group/version garbage.invalid/v0)');
  const brokeAt = Date.now();
  server.convertMode = 'garbage';
  const action = `conversion webhook ${server.base}/convert returns convertedObjects of apiVersion garbage.invalid/v0`;
  timeline.mark(`broke: ${action}`);

  log.step('Observe: reads and writes of thermos with kubectl, the apiserver journal');
  // Until an object changes, v2 lists come from the apiserver's watch cache for v2, which holds
  // copies converted when they were written: the break is invisible there. A GET by name reads
  // etcd and converts now. The first write (through v1, which needs no conversion to store)
  // makes the v2 watch convert again, and from then on every v2 read fails.
  const stillWorks: Probe[] = [
    probe(
      await kubectl(d, ['-n', NS, 'get', 'thermos']),
      'before any write: kubectl get thermos (v2) is served from the watch cache, converted before the break',
      'works',
    ),
  ];
  const symptoms: Probe[] = [
    probe(
      await kubectl(d, ['-n', NS, 'get', `thermos.v2.${GROUP}`, 'written-as-v1', '-o', 'yaml']),
      'get one object in v2 (read from etcd, converted now)',
      'fails',
    ),
    probe(
      await kubectl(
        d,
        ['-n', NS, 'apply', '-f', '-'],
        JSON.stringify({
          apiVersion: `${GROUP}/v2`,
          kind: 'Thermo',
          metadata: { name: 'written-as-v2', namespace: NS },
          spec: { temperature: { value: 71, unit: 'F' } },
        }),
      ),
      'a write in v2 (must be converted to v1 to be stored)',
      'fails',
    ),
  ];
  const poison = probe(
    await kubectl(
      d,
      ['-n', NS, 'create', '-f', '-'],
      JSON.stringify({
        apiVersion: `${GROUP}/v1`,
        kind: 'Thermo',
        metadata: { name: 'written-during-break', namespace: NS },
        spec: { celsius: 5 },
      }),
    ),
    'a write in v1, the stored version, needs no conversion and works; the v2 watch must now convert it',
    'works',
  );
  stillWorks.push(poison);
  timeline.mark(`a new object written in v1 during the break (exit ${poison.code})`);
  const journal = new ApiserverJournal(d, 'conversion webhook for', brokeAt);
  let failed: Probe | undefined;
  const end = brokeAt + opts.observeTimeoutMs;
  while (Date.now() < end) {
    if (!failed) {
      const r = await kubectl(d, ['-n', NS, 'get', 'thermos']);
      if (r.code !== 0) {
        failed = probe(
          r,
          'after that write, kubectl get thermos (v2, the preferred version) fails',
          'fails',
        );
        timeline.mark(`symptom: ${r.output.split('\n')[0]}`);
      }
    }
    for (const l of await journal.poll()) timeline.mark(`journal: ${l.host} ${l.at}`);
    if (failed && journal.lines().length > 0) break;
    await sleep(1000);
  }
  if (failed) symptoms.push(failed);
  const lines = journal.lines();
  const firstSymptom = symptoms
    .filter((p) => p.asExpected)
    .map((p) => Date.parse(p.at))
    .sort()[0];
  const detectedAt =
    firstSymptom !== undefined && lines.length > 0
      ? Math.max(firstSymptom, Date.parse(lines[0]!.at))
      : null;
  const captured: CapturedLine[] = lines.map((l) => ({
    source: 'journal',
    host: l.host,
    unit: l.unit,
    at: l.at,
    line: l.line,
    traces: traceLine(l.line),
  }));
  const garbage = server
    .lines()
    .find((l) => Date.parse(l.at) >= brokeAt && l.line.includes('(garbage)'));
  if (garbage)
    captured.push({
      source: 'webhook-server',
      file: server.logFile,
      at: garbage.at,
      line: garbage.line,
      traces: [],
    });
  symptoms.push(
    probe(
      await kubectl(d, ['get', `thermos.v2.${GROUP}`, '-A', '-o', 'name']),
      'list v2 in every namespace',
      'fails',
    ),
  );
  stillWorks.push(
    probe(
      await kubectl(d, ['-n', NS, 'get', 'notes']),
      `another CRD (${OTHER_CRD}) in the same group and namespace`,
      'works',
    ),
    probe(
      await kubectl(d, ['-n', 'kube-system', 'get', 'leases']),
      'built-in types (Leases)',
      'works',
    ),
    probe(
      await kubectl(d, ['get', 'crd', CRD, '-o', 'jsonpath={.status.storedVersions}']),
      'the CRD object itself',
      'works',
    ),
    probe(
      await kubectl(d, ['-n', NS, 'get', `thermos.v1.${GROUP}`, '-o', 'name']),
      'reads asking for v1, the stored version (no conversion)',
      'works',
    ),
  );
  const recoverCommand = `kubectl --kubeconfig ${d.adminConf} patch crd ${CRD} --type=merge -p '{"spec":{"conversion":{"strategy":"None","webhook":null}}}'   # then delete: kubectl delete namespace ${NS}; kubectl delete crd ${CRD} ${OTHER_CRD}; or re-run: hardwire drill conversion-webhook`;
  const report = (over: Partial<ApiDrillReport>): ApiDrillReport => ({
    drill: '3.C2',
    title: 'garbage-returning conversion webhook',
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
    details: { before },
    timeline: timeline.entries(),
    ...over,
  });
  if (opts.keepBroken) {
    timeline.mark(
      `--keep-broken: stopping here (the drill's server stops with this process, so conversions now fail to connect). Recover: ${recoverCommand}`,
    );
    return report({ keptBroken: true, timeline: timeline.entries(), finalGates: await gates(d) });
  }

  log.step('Recover: the webhook returns correct conversions again');
  const recovery: RecoveryStep[] = [];
  const step = (s: string, why: string) => {
    recovery.push({ step: s, why, at: iso() });
    timeline.mark(s);
  };
  const r0 = Date.now();
  server.convertMode = 'correct';
  step(
    'the conversion webhook returns correct conversions again',
    'the objects in etcd were never touched: only what the webhook returned on the way out was wrong, so fixing the webhook fixes every read',
  );
  const back = await retry<KubectlRun>(
    async () => {
      const r = await kubectl(d, ['-n', NS, 'get', 'thermos']);
      if (r.code !== 0) throw new Seen(r);
      return r;
    },
    { timeoutMs: 60_000, intervalMs: 500, onTimeout: lastSeen },
  );
  const timeToRecoverMs = Date.now() - r0;
  const all = { v1: await readAll(d, 'v1'), v2: await readAll(d, 'v2') };
  const after = { v1: pick(all.v1, before.v1), v2: pick(all.v2, before.v2) };
  const intact = JSON.stringify(after) === JSON.stringify(before);
  step(
    `kubectl get thermos works (exit ${back.code}); objects ${intact ? 'intact' : 'CHANGED'}: same uid, resourceVersion and spec in v1 and v2`,
    'reads are compared with the ones taken before the break',
  );
  await cleanup(d);
  step(
    `deleted namespace ${NS} and CRDs ${CRD}, ${OTHER_CRD}`,
    'the drill leaves the cluster as it found it',
  );
  const finalGates = await gates(d);
  return report({
    recovery,
    recovered: back.code === 0 && intact && finalGates.every((g) => g.ok),
    finalGates,
    timeToRecoverMs,
    details: {
      webhook: `${server.base}/convert`,
      serverLog: server.logFile,
      intact,
      before,
      after,
      conversionReviews: server.lines().filter((l) => l.line.includes('ConversionReview')).length,
    },
    timeline: timeline.entries(),
  });
}
