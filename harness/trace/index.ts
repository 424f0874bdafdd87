// `hardwire trace apply` (issue 25's capstone): one `kubectl apply` of a new object against a debug
// kube-apiserver under delve on the first control-plane host, and the stages the request went
// through, from the live goroutine stacks, down to the etcd client's Txn.
import type { Inventory } from '../../core/inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import { newContext } from '../../core/apply/context.ts';
import { runPhases } from '../../core/apply/phase.ts';
import { connectPhase } from '../../core/apply/phases/connect.ts';
import { adminKubeconfigPath } from '../../core/apply/creds.ts';
import { ensureAll } from '../../core/components/binaries/index.ts';
import { clusterStateDir } from '../../core/pki/store.ts';
import { join } from 'node:path';
import { run } from '../../lib/proc.ts';
import { InputError, StepError } from '../../lib/errors.ts';
import type { Session } from '../../core/transport/index.ts';
import { traceOnHost, type HostTrace } from './host.ts';
import type { Kubectl } from './record.ts';
import { FORBIDDEN, type Sink } from './sinks.ts';
import { rejectThenAdmit, rejection, unbind, type AuthzTrace } from './authz.ts';
import {
  atCompiledVersions,
  CURRICULUM,
  deriveStages,
  requestHits,
  type Hit,
  type Stage,
} from './stages.ts';
import type { TraceObject } from './object.ts';
import { debugBuildReplaces } from '../delve/modules.ts';
import {
  CAPSTONE_CRD,
  CAPSTONE_SINKS,
  capstoneCalls,
  capstoneOnCluster,
  capstoneRequestHits,
  MUTATING_CONFIGURATION,
  VALIDATING_CONFIGURATION,
  type CapstoneTrace,
} from './capstone.ts';
import {
  armWebhook,
  CONFIGURATION,
  WEBHOOK_NAME,
  WEBHOOK_SINKS,
  webhookPoints,
  webhookRequestHits,
  type ArmedWebhook,
  type WebhookTrace,
} from './webhook.ts';

export {
  CAPSTONE_CRD,
  CAPSTONE_GROUP,
  CAPSTONE_NS,
  MUTATED_LABEL,
  MUTATING_CONFIGURATION,
  VALIDATING_CONFIGURATION,
} from './capstone.ts';

export interface TraceReport {
  kubernetesVersion: string;
  host: string;
  date: string;
  object: TraceObject;
  debugBinary: { name: string; sha256: string };
  dlv: { version: string; sha256: string };
  /** The debug instance's argv: the unit's flags, its own port, audit log and reconciler. */
  argv: string[];
  kubectl: Kubectl;
  sinks: Sink[];
  /** This request's hits, in the order delve stopped at them, with delve's replies verbatim. */
  hits: Hit[];
  stages: Stage[];
  /** The curriculum's nine, each with the number of the stage it is, or none when not seen. */
  curriculum: { name: string; stage?: number }[];
  /** With --authz-user: the same create rejected by authorization first, then admitted once bound. */
  authz?: AuthzTrace;
  /** With --webhook-reject: the create a validating webhook rejected (kubectl above got its message); where admission called out, where the answer came back, where it became the rejection. */
  webhook?: WebhookTrace;
  /** With --capstone: where the create called each of the capstone's three webhooks. */
  capstone?: CapstoneTrace;
  seconds: { total: number; startup: number; traced: number };
}

export async function traceApply(
  inv: Inventory,
  stateDir: string,
  obj: TraceObject,
  opts: {
    readyTimeoutMs: number;
    acceptNewHostKeys: boolean;
    authzUser?: string;
    webhookReject?: boolean;
    capstone?: boolean;
  },
  log: Logger,
): Promise<TraceReport> {
  const started = Date.now();
  const version = inv.cluster.kubernetesVersion;
  const [debug, dlv, kubectl, webhookBin] = await ensureAll(
    ['kube-apiserver-debug', 'dlv', 'kubectl', ...(opts.webhookReject ? ['webhook' as const] : [])],
    { kubernetesVersion: version, log },
  );
  const host = inv.controlPlaneHosts[0];
  if (!host) throw new InputError('inventory', 'has no control-plane host to trace on');
  const clusterDir = clusterStateDir(stateDir, inv);
  const kubeconfig = adminKubeconfigPath(clusterDir);
  const k = (args: string[]) =>
    run(kubectl!.path, ['--kubeconfig', kubeconfig, ...args], {
      step: 'kubectl',
      allowFail: true,
      timeoutMs: 600_000,
    });
  // A create is traced, so the object must not exist yet: apply would patch it.
  const exists = await k(['get', '-f', obj.file, '-o', 'name', '--ignore-not-found']);
  if (exists.code !== 0)
    throw new StepError('trace apply', `kubectl get -f ${obj.file}: ${exists.stderr.trim()}`);
  if (exists.stdout.trim())
    throw new InputError(
      '-f',
      `${exists.stdout.trim()} already exists, and apply would patch it; trace apply traces a create: give a new metadata.name`,
    );
  if (opts.capstone) await capstoneOnCluster(k);
  const ctx = newContext(
    inv,
    stateDir,
    clusterDir,
    {
      dryRun: false,
      gateTimeoutMs: opts.readyTimeoutMs,
      acceptNewHostKeys: opts.acceptNewHostKeys,
    },
    log,
  );
  let out: HostTrace | undefined;
  let authz: Awaited<ReturnType<typeof rejectThenAdmit>> | undefined;
  let armed: ArmedWebhook | undefined;
  let serverLog: string[] = [];
  const apply = async (port: number): Promise<Kubectl> => {
    if (opts.authzUser) {
      authz = await rejectThenAdmit(k, `https://127.0.0.1:${port}`, obj, opts.authzUser);
      return authz.admitted;
    }
    const args = ['--server', `https://127.0.0.1:${port}`, 'apply', '-f', obj.file];
    const r = await k(args);
    return {
      command: `kubectl ${args.join(' ')}`,
      code: r.code,
      output: `${r.stdout}${r.stderr}`.trim(),
    };
  };
  const onHost = async (s: Session): Promise<HostTrace> => {
    // The webhook and its configuration before the debug apiserver starts, which lists the configuration then.
    if (webhookBin) armed = await armWebhook(s, webhookBin.path, k, obj, join(stateDir, 'trace'));
    try {
      return await traceOnHost(
        s,
        {
          dlv: dlv!.path,
          debugBinary: debug!.path,
          kind: obj.kind,
          readyTimeoutMs: opts.readyTimeoutMs,
          ...(armed ? { extraSinks: WEBHOOK_SINKS } : {}),
          ...(opts.capstone ? { extraSinks: CAPSTONE_SINKS } : {}),
          apply,
        },
        log,
      );
    } finally {
      if (armed) {
        serverLog = await armed.serverLog();
        await armed.disarm();
      }
    }
  };
  await runPhases(
    [
      connectPhase,
      {
        id: 'trace',
        title: `Run a debug kube-apiserver under delve on ${host.name} beside its unit, and trace one kubectl apply through it`,
        async run(c) {
          out = await c.wet.run(host.name, 'trace kubectl apply', onHost);
        },
      },
    ],
    ctx,
  ).finally(async () => {
    if (opts.authzUser) await unbind(k, obj, opts.authzUser);
  });
  if (!out) throw new StepError('trace apply', 'the trace did not run');
  const replaced = debugBuildReplaces(version);
  let hits: Hit[];
  let stages: Stage[];
  let webhook: WebhookTrace | undefined;
  let capstone: CapstoneTrace | undefined;
  // Every create but --webhook-reject's must succeed.
  if (!armed && out.kubectl.code !== 0)
    throw new StepError(
      'trace apply',
      `${out.kubectl.command} exited ${out.kubectl.code}: ${out.kubectl.output}`,
    );
  if (opts.capstone) {
    hits = capstoneRequestHits(out.hits, obj.name, obj.namespace!);
    if (!hits.length)
      throw new StepError(
        'trace apply',
        `no stop at etcd3 store.Create wrote a key ending in ${obj.namespace}/${obj.name} (${out.hits.length} stops in all)`,
      );
    stages = deriveStages(hits, replaced);
    capstone = {
      crd: CAPSTONE_CRD,
      configurations: [MUTATING_CONFIGURATION, VALIDATING_CONFIGURATION],
      calls: capstoneCalls(hits, stages),
    };
  } else if (armed) {
    if (
      out.kubectl.code === 0 ||
      !out.kubectl.output.includes(`admission webhook "${WEBHOOK_NAME}" denied the request`)
    )
      throw new StepError(
        'trace apply',
        `${out.kubectl.command} was not rejected by the webhook (exit ${out.kubectl.code}): ${out.kubectl.output}`,
      );
    hits = webhookRequestHits(out.hits);
    if (!hits.length)
      throw new StepError(
        'trace apply',
        `no stop at webhook errors.ToStatusErr (${out.hits.length} stops in all)`,
      );
    stages = deriveStages(hits, replaced);
    webhook = {
      configuration: CONFIGURATION,
      webhook: WEBHOOK_NAME,
      url: armed.url,
      ...webhookPoints(hits, stages),
      serverLog,
    };
  } else {
    hits = requestHits(out.hits, obj.name, obj.namespace);
    if (!hits.length)
      throw new StepError(
        'trace apply',
        `no stop at etcd3 store.Create wrote a key ending in ${obj.name} (${out.hits.length} stops in all)`,
      );
    stages = deriveStages(hits, replaced);
  }
  const rejected = opts.authzUser ? rejection(out.hits, replaced) : undefined;
  if (authz && !rejected)
    throw new StepError(
      'trace apply',
      `${authz.rejected.command} was rejected, but delve never stopped at ${FORBIDDEN}`,
    );
  return {
    kubernetesVersion: version,
    host: host.name,
    date: new Date().toISOString(),
    object: obj,
    debugBinary: { name: debug!.name, sha256: debug!.sha256 },
    dlv: { version: dlv!.version, sha256: dlv!.sha256 },
    argv: out.argv,
    kubectl: out.kubectl,
    sinks: out.sinks,
    hits: atCompiledVersions(hits, replaced),
    stages,
    curriculum: CURRICULUM.map((name) => {
      const n = stages.find((s) => s.curriculum === name)?.n;
      return n === undefined ? { name } : { name, stage: n };
    }),
    ...(authz && rejected
      ? {
          authz: {
            user: opts.authzUser!,
            rejected: authz.rejected,
            bound: authz.bound,
            ...rejected,
          },
        }
      : {}),
    ...(webhook ? { webhook } : {}),
    ...(capstone ? { capstone } : {}),
    seconds: { total: (Date.now() - started) / 1000, ...out.seconds },
  };
}
