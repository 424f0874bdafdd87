// The opt-in addons' gates (cluster.addons), read through the apiserver as admin, as a user would see
// them: metrics-server's APIService Available, then every worker's usage from metrics.k8s.io (the
// API `kubectl top nodes` reads, kubectl's own path).
import { adminCreds } from '../apply/creds.ts';
import { kubeJson } from '../transport/kube-api.ts';
import { StepError } from '../../lib/errors.ts';
import { retry } from '../../lib/retry.ts';
import { METRICS_APISERVICE } from '../addons/metrics-server.ts';
import type { Check, GateContext } from '../components/registry/types.ts';

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** The aggregator's Available condition of the APIService: True, or why not (its reason and message). */
async function apiServiceAvailable(ctx: GateContext): Promise<string> {
  const r = await kubeJson<{ status?: { conditions?: Condition[] } }>(
    adminCreds(ctx.clusterDir),
    'GET',
    `/apis/apiregistration.k8s.io/v1/apiservices/${METRICS_APISERVICE}`,
  );
  const a = r.json.status?.conditions?.find((c) => c.type === 'Available');
  if (a?.status !== 'True')
    throw new Error(
      `APIService ${METRICS_APISERVICE} not Available: ${a ? `${a.reason}: ${a.message}` : 'no condition yet'}`,
    );
  return `APIService ${METRICS_APISERVICE} Available`;
}

/** GET /apis/metrics.k8s.io/v1beta1/nodes: each worker with a CPU and memory usage, as `kubectl top nodes` prints them. */
export async function nodeUsage(ctx: GateContext): Promise<string> {
  const r = await kubeJson<{
    items: { metadata: { name: string }; usage?: { cpu?: string; memory?: string } }[];
  }>(adminCreds(ctx.clusterDir), 'GET', '/apis/metrics.k8s.io/v1beta1/nodes');
  const by = new Map(r.json.items.map((i) => [i.metadata.name, i.usage]));
  const missing = ctx.inv.workerHosts.filter(
    (h) => !by.get(h.name)?.cpu || !by.get(h.name)?.memory,
  );
  if (missing.length > 0)
    throw new Error(
      `metrics.k8s.io has no usage for ${missing.map((h) => h.name).join(', ')} yet (it has ${[...by.keys()].join(', ') || 'none'})`,
    );
  return ctx.inv.workerHosts
    .map((h) => `${h.name} cpu ${by.get(h.name)!.cpu} memory ${by.get(h.name)!.memory}`)
    .join(', ');
}

/**
 * Why metrics-server's Pods are not Ready, as the kubelet reports it (an image pull refused shows as
 * ErrImagePull or ImagePullBackOff with containerd's message): the gate's detail when it times out.
 */
async function metricsServerPods(ctx: GateContext): Promise<string[]> {
  const r = await kubeJson<{
    items: {
      metadata: { name: string };
      spec: { nodeName?: string };
      status: {
        phase: string;
        containerStatuses?: {
          ready: boolean;
          state: Record<string, { reason?: string; message?: string } | undefined>;
        }[];
      };
    }[];
  }>(
    adminCreds(ctx.clusterDir),
    'GET',
    '/api/v1/namespaces/kube-system/pods?labelSelector=k8s-app%3Dmetrics-server',
  );
  if (r.json.items.length === 0) return ['no metrics-server Pod'];
  return r.json.items.map((p) => {
    const states = (p.status.containerStatuses ?? []).map((c) => {
      const [state, v] = Object.entries(c.state).find(([, x]) => x !== undefined) ?? ['unknown'];
      return `${state}${v?.reason ? ` ${v.reason}` : ''}${v?.message ? `: ${v.message}` : ''}${c.ready ? ' (ready)' : ''}`;
    });
    return `Pod ${p.metadata.name} on ${p.spec.nodeName ?? 'no node'}: ${p.status.phase}${states.length ? `, ${states.join('; ')}` : ''}`;
  });
}

/** metrics-server's checks, in order: the APIService, then the nodes' numbers. */
function metricsServerChecks(ctx: GateContext): Check[] {
  return [
    {
      name: `metrics-server: ${METRICS_APISERVICE} Available`,
      run: () => apiServiceAvailable(ctx),
    },
    {
      name: 'metrics-server: every worker has usage (kubectl top nodes)',
      run: () => nodeUsage(ctx),
    },
  ];
}

/** Every enabled addon's checks, for the phase's gate and `hardwire verify`. */
export function addonChecks(ctx: GateContext): Check[] {
  return ctx.inv.addons.flatMap((a) => (a === 'metrics-server' ? metricsServerChecks(ctx) : []));
}

/** Each check in turn within one gate timeout; the last error is the gate's message. */
export async function addonsGate(ctx: GateContext): Promise<void> {
  const deadline = Date.now() + ctx.opts.gateTimeoutMs;
  for (const c of addonChecks(ctx)) {
    const detail = await retry(c.run, {
      timeoutMs: Math.max(1000, deadline - Date.now()),
      intervalMs: 2000,
      startBeforeDeadline: true,
      onTimeout: async (last) => {
        throw new StepError(
          'gate addons',
          `${c.name}: ${last instanceof Error ? last.message : String(last)}`,
          {
            detail: await metricsServerPods(ctx).catch((e: unknown) => [
              `metrics-server's Pods not read: ${String(e)}`,
            ]),
          },
        );
      },
    });
    ctx.log.info(`  ${c.name}: ${detail}`);
  }
}
