// Cluster addons (CoreDNS) and the probe workload (gates/pods.ts), applied through the apiserver as
// admin once workers can run Pods.
// Idempotent without server-side apply: GET each object, POST it if missing, PUT it if a field
// hardwire owns differs, else leave it alone, so a re-run with nothing to change writes nothing.
import { isDeepStrictEqual } from 'node:util';
import type { Phase } from '../phase.ts';
import { adminCreds } from '../creds.ts';
import { kubeJson, type KubeCreds } from '../../transport/kube-api.ts';
import { retry } from '../../../lib/retry.ts';
import { corednsObjects } from '../../addons/coredns.ts';
import { metricsServerObjects } from '../../addons/metrics-server.ts';
import { addonsGate } from '../../gates/addons.ts';
import type { Inventory } from '../../inventory/load.ts';
import { probeObjects, probeGate } from '../../gates/pods.ts';
import { isNoop } from './gates.ts';
import { workersLive } from './nodes.ts';

interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  [k: string]: unknown;
}

const PLURAL: Record<string, string> = {
  ServiceAccount: 'serviceaccounts',
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
  RoleBinding: 'rolebindings',
  APIService: 'apiservices',
  ConfigMap: 'configmaps',
  Deployment: 'deployments',
  Service: 'services',
  Namespace: 'namespaces',
  Pod: 'pods',
};

/** The collection an object is created in: core group under /api, the rest under /apis. */
export function collectionPath(o: {
  apiVersion: string;
  kind: string;
  metadata: { namespace?: string };
}): string {
  const plural = PLURAL[o.kind];
  if (!plural) throw new Error(`addons: no API path known for kind ${o.kind}`);
  const group = o.apiVersion.includes('/') ? `/apis/${o.apiVersion}` : `/api/${o.apiVersion}`;
  return `${group}${o.metadata.namespace ? `/namespaces/${o.metadata.namespace}` : ''}/${plural}`;
}

/** The parts of an object ownedFields reads, live or wanted. */
interface Obj {
  kind: string;
  rules?: unknown;
  roleRef?: unknown;
  subjects?: unknown;
  data?: unknown;
  spec?: {
    clusterIP?: unknown;
    ports?: unknown;
    replicas?: unknown;
    template?: { spec?: { containers?: { image?: unknown; args?: unknown }[] } };
  };
}

/**
 * The fields hardwire decides, by kind: only these are compared, because the apiserver adds defaults
 * (strategy, terminationMessagePath, clusterIPs, ...) that a whole-object compare would see as drift
 * on every run. A ServiceAccount has nothing owned beyond its name. roleRef and clusterIP are
 * immutable: a change there makes the PUT fail with the apiserver's own message (delete by hand).
 */
export function ownedFields(o: Obj): Record<string, unknown> {
  switch (o.kind) {
    case 'ClusterRole':
      return { rules: o.rules };
    case 'ClusterRoleBinding':
    case 'RoleBinding':
      return { roleRef: o.roleRef, subjects: o.subjects };
    // The aggregator fills in only status; spec.service.port is given as its default (443).
    case 'APIService':
      return { spec: o.spec };
    case 'ConfigMap':
      return { data: o.data };
    case 'Service':
      return { clusterIP: o.spec?.clusterIP, ports: o.spec?.ports };
    // A Pod's image is one of the few mutable fields of its spec.
    case 'Pod':
      return {
        image: (o.spec as { containers?: { image?: unknown }[] } | undefined)?.containers?.[0]
          ?.image,
      };
    case 'Deployment': {
      const c = o.spec?.template?.spec?.containers?.[0];
      return { replicas: o.spec?.replicas, image: c?.image, args: c?.args };
    }
    default:
      return {};
  }
}

/** What differs between live and wanted owned fields, for the intent's message; empty when equal. */
export function ownedDiff(live: Obj, want: Obj): string[] {
  const l = ownedFields(live);
  const w = ownedFields(want);
  const short = (v: unknown) => {
    const s = JSON.stringify(v) ?? 'unset';
    return s.length > 60 ? `${s.slice(0, 57)}...` : s;
  };
  // A field the wanted object leaves unset (a probe Service's clusterIP) is the apiserver's to choose.
  return Object.keys(w)
    .filter((f) => w[f] !== undefined && !isDeepStrictEqual(l[f], w[f]))
    .map((f) => `${f} ${short(l[f])} -> ${short(w[f])}`);
}

/**
 * A Pod in a namespace made moments ago waits for its default ServiceAccount, which the
 * controller-manager's serviceaccounts controller creates (k8s.io/kubernetes@v1.36.3/pkg/controller/serviceaccount/serviceaccounts_controller.go:192):
 * until then the ServiceAccount admission plugin refuses the Pod with a 403
 * (k8s.io/kubernetes@v1.36.3/plugin/pkg/admission/serviceaccount/admission.go:226, "error looking up service account").
 */
async function defaultServiceAccount(creds: KubeCreds, namespace: string): Promise<void> {
  await retry(
    async () => {
      await kubeJson(creds, 'GET', `/api/v1/namespaces/${namespace}/serviceaccounts/default`);
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
}

/** The opt-in addons' objects (cluster.addons), after CoreDNS's, each addon in the order it is listed. */
export function optInObjects(inv: Inventory): object[] {
  return inv.addons.flatMap((a) => (a === 'metrics-server' ? metricsServerObjects() : []));
}

export const addonsPhase: Phase = {
  id: 'addons',
  title:
    'Apply the CoreDNS addon, the opt-in addons (cluster.addons) and a probe Pod per worker with a Service over them (as admin); gate each opt-in addon',
  shouldRun: workersLive,
  async run(ctx) {
    const creds = adminCreds(ctx.clusterDir);
    const host = ctx.inv.controlPlaneHosts[0]!.name;
    const objects = [
      ...corednsObjects(ctx.inv),
      ...optInObjects(ctx.inv),
      ...probeObjects(ctx.inv),
    ] as KubeObject[];
    // Read all at once (a no-op run makes only these reads); write in order, each after what it needs.
    const live = await Promise.all(
      objects.map((o) =>
        kubeJson<KubeObject>(creds, 'GET', `${collectionPath(o)}/${o.metadata.name}`, {
          allow: [404],
        }),
      ),
    );
    for (const [i, o] of objects.entries()) {
      const {
        kind,
        metadata: { name, namespace },
      } = o;
      const where = `${kind} ${namespace ? `${namespace}/` : ''}${name}`;
      const coll = collectionPath(o);
      const got = live[i]!;
      if (got.status === 404) {
        await ctx.wet.run(host, `create ${where}`, async () => {
          if (kind === 'Pod' && namespace) await defaultServiceAccount(creds, namespace);
          return kubeJson(creds, 'POST', coll, { body: o });
        });
        continue;
      }
      const diff = ownedDiff(got.json, o);
      if (diff.length === 0) continue;
      // The whole wanted object, on the live resourceVersion: a concurrent change makes it a 409, not a lost update.
      const body = {
        ...o,
        metadata: { ...o.metadata, resourceVersion: got.json.metadata.resourceVersion },
      };
      await ctx.wet.run(host, `update ${where}: ${diff.join('; ')}`, () =>
        kubeJson(creds, 'PUT', `${coll}/${name}`, { body }),
      );
    }
    // Each opt-in addon proven as its user would use it (gates/addons.ts); with none enabled, nothing is read.
    await addonsGate(ctx);
  },
};

export const probesPhase: Phase = {
  id: 'probes',
  title:
    'Gate the workload: each probe Pod Running; after any change also its log, kubectl exec, Pod to Pod across nodes, the Service by DNS name',
  shouldRun: workersLive,
  // A run that changed nothing re-reads only the Pods' phase: the rest was proven when they started.
  run: (ctx) => probeGate(ctx, !isNoop(ctx)),
};
