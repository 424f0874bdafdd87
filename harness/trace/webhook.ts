// `trace apply --webhook-reject`: the create of an object that a validating webhook rejects. The
// webhook (webhook-host.ts) runs on the traced host; a ValidatingWebhookConfiguration, made through
// the unit's apiserver, sends it the create of the traced object alone (a CEL match condition on
// its namespace and name, so no other write in the cluster calls it) and fails closed. Three more
// sinks show the webhook's part, each point named from the live stack as the frame that called the sink:
//   - where admission calls out: the caller of client-go's rest.(*Request).Do, in the validating
//     dispatcher's callHook (every other Do the apiserver makes meanwhile is on another goroutine);
//   - where the answer comes back: the caller of request.VerifyAdmissionResponse;
//   - where it becomes the rejection: the caller of webhook errors.ToStatusErr.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Session } from '../../core/transport/index.ts';
import type { RunResult } from '../../lib/proc.ts';
import { InputError, StepError } from '../../lib/errors.ts';
import type { TraceObject } from './object.ts';
import type { Hit, Stage } from './stages.ts';
import type { Sink } from './sinks.ts';
import { startHostWebhook } from './webhook-host.ts';

export const CONFIGURATION = 'hardwire-trace-webhook';
export const WEBHOOK_NAME = 'trace-reject.hardwire.dev';
/** What hardwire's webhook denies (core/components/go/webhook/main.go): a ConfigMap with this data key. */
export const DENIED_KEY = 'forbidden';

export const WEBHOOK_SINKS: Sink[] = [
  { id: 'webhook-call', function: 'k8s.io/client-go/rest.(*Request).Do' },
  {
    id: 'webhook-answer',
    function: 'k8s.io/apiserver/pkg/admission/plugin/webhook/request.VerifyAdmissionResponse',
  },
  {
    id: 'webhook-rejection',
    function: 'k8s.io/apiserver/pkg/admission/plugin/webhook/errors.ToStatusErr',
  },
];

export interface WebhookTrace {
  configuration: string;
  webhook: string;
  url: string;
  /** Stages of the trace: the frame that called each of the three sinks. */
  callOut: Stage;
  answer: Stage;
  rejection: Stage;
  /** The webhook server's journal during the run, verbatim. */
  serverLog: string[];
}

type RunKubectl = (args: string[]) => Promise<RunResult>;

/** The object must be one the webhook denies: a ConfigMap with the data key it refuses. */
export function requireDenied(obj: TraceObject): void {
  if (obj.kind !== 'ConfigMap' || !obj.dataKeys?.includes(DENIED_KEY)) {
    throw new InputError(
      '-f',
      `with --webhook-reject the object must be a ConfigMap with a data key "${DENIED_KEY}" (what hardwire's webhook denies); ${obj.file} is a ${obj.kind}${obj.kind === 'ConfigMap' ? ` without it` : ''}`,
    );
  }
}

export function webhookConfiguration(obj: TraceObject, url: string, caPem: string): object {
  const ns = obj.namespace ?? 'default';
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: CONFIGURATION, labels: { 'app.kubernetes.io/managed-by': 'hardwire' } },
    webhooks: [
      {
        name: WEBHOOK_NAME,
        clientConfig: { url, caBundle: Buffer.from(caPem).toString('base64') },
        rules: [
          {
            operations: ['CREATE'],
            apiGroups: [''],
            apiVersions: ['v1'],
            resources: ['configmaps'],
            scope: 'Namespaced',
          },
        ],
        matchConditions: [
          {
            name: 'the-traced-object',
            expression: `request.namespace == "${ns}" && object.metadata.name == "${obj.name}"`,
          },
        ],
        failurePolicy: 'Fail',
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        timeoutSeconds: 30,
      },
    ],
  };
}

export interface ArmedWebhook {
  url: string;
  serverLog(): Promise<string[]>;
  disarm(): Promise<void>;
}

/** The webhook on the host and its configuration in the cluster; disarm removes both (the configuration first). */
export async function armWebhook(
  s: Session,
  binary: string,
  k: RunKubectl,
  obj: TraceObject,
  dir: string,
): Promise<ArmedWebhook> {
  const server = await startHostWebhook(s, binary);
  const remove = () =>
    k(['delete', 'validatingwebhookconfiguration', CONFIGURATION, '--ignore-not-found']);
  try {
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${CONFIGURATION}.json`);
    writeFileSync(
      file,
      `${JSON.stringify(webhookConfiguration(obj, server.url, server.caPem), null, 2)}\n`,
    );
    const r = await k(['apply', '-f', file]);
    if (r.code !== 0)
      throw new StepError(
        'trace apply',
        `kubectl apply -f ${file}: ${`${r.stdout}${r.stderr}`.trim()}`,
      );
  } catch (err) {
    await remove();
    await server.stop();
    throw err;
  }
  return {
    url: server.url,
    serverLog: () => server.journal(),
    disarm: async () => {
      await remove();
      await server.stop();
    },
  };
}

/** The rejected request's hits: those on the goroutine that turned the answer into the rejection, and on the goroutines that started it. */
export function webhookRequestHits(hits: Hit[]): Hit[] {
  const rejected = hits.find((h) => h.sink === 'webhook-rejection');
  if (!rejected) return [];
  const ours = new Set(rejected.chain.map((c) => c.goroutine));
  return hits.filter((h) => ours.has(h.goroutine));
}

/** The stage that called the sink at its first hit: the frame just above it on that stop's stack. */
function callerOf(hits: Hit[], stages: Stage[], sink: Sink['id']): Stage | undefined {
  const i = hits.findIndex((h) => h.sink === sink);
  if (i < 0) return undefined;
  const own = stages.filter((s) => s.hit === i);
  const k = own.findIndex((s) => s.function === hits[i]!.function);
  return k > 0 ? own[k - 1] : undefined;
}

export function webhookPoints(
  hits: Hit[],
  stages: Stage[],
): Pick<WebhookTrace, 'callOut' | 'answer' | 'rejection'> {
  const [callOut, answer, rejection] = (
    ['webhook-call', 'webhook-answer', 'webhook-rejection'] as const
  ).map((id) => {
    const st = callerOf(hits, stages, id);
    if (!st)
      throw new StepError(
        'trace apply',
        `no stop at ${WEBHOOK_SINKS.find((x) => x.id === id)!.function} on the rejected request's goroutines, under a frame of its own`,
      );
    return st;
  });
  return { callOut: callOut!, answer: answer!, rejection: rejection! };
}
