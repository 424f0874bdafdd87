// verify's API smoke test through admin.conf. Each check returns evidence, and everything it
// creates lives in one namespace and one CRD that are deleted at the end.
// The locally built pause image: on a cluster with workers the Pods run, and nothing is pulled.
import { IMAGES } from '../components/images.ts';
import { randomBytes } from 'node:crypto';
import { kubeJson, kubeRequest, watchFor, type KubeCreds } from '../transport/kube-api.ts';
import { retry } from '../../lib/retry.ts';
import { etcdctlArgv } from './etcd.ts';
import type { Inventory } from '../inventory/load.ts';
import type { ReadSession as Session } from '../transport/index.ts';

export interface CheckResult {
  name: string;
  ok: boolean;
  detail: string;
  ms: number;
}

type Meta = { metadata: { name: string; ownerReferences?: { kind: string; name: string }[] } };

/** Runs one check; a throw is a failed check with its message as the detail. */
export async function timed(name: string, fn: () => Promise<string>): Promise<CheckResult> {
  const t0 = performance.now();
  try {
    return { name, ok: true, detail: await fn(), ms: Math.round(performance.now() - t0) };
  } catch (err) {
    return {
      name,
      ok: false,
      detail: err instanceof Error ? err.message : String(err),
      ms: Math.round(performance.now() - t0),
    };
  }
}

async function check(
  results: CheckResult[],
  name: string,
  fn: () => Promise<string>,
): Promise<void> {
  results.push(await timed(name, fn));
}

export async function smoke(
  creds: KubeCreds,
  inv: Inventory,
  etcdSession: Session,
  /** What etcd must hold at the start of a Secret written now (pki/encryption.ts writePrefix). */
  encrypted: string,
): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  const run = randomBytes(3).toString('hex');
  const ns = `hardwire-smoke-${run}`;
  // A group of this run's own, as the namespace is: a CRD deleted by an earlier run can stay
  // terminating for minutes (its finalizer deletes every Widget first), and two CRDs of one group
  // may not share a kind. Nothing to wait for, nothing to collide with.
  const group = `s${run}.smoke.hardwire.dev`;
  const crd = `widgets.${group}`;
  const api = `/api/v1/namespaces/${ns}`;
  try {
    await check(results, 'namespace and ConfigMap', async () => {
      await kubeJson(creds, 'POST', '/api/v1/namespaces', {
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
      });
      await kubeJson(creds, 'POST', `${api}/configmaps`, {
        body: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'hello' },
          data: { greeting: 'hi' },
        },
      });
      const { json } = await kubeJson<{ data?: { greeting?: string } }>(
        creds,
        'GET',
        `${api}/configmaps/hello`,
      );
      if (json.data?.greeting !== 'hi') throw new Error('ConfigMap did not read back');
      return `created namespace ${ns} and ConfigMap hello`;
    });

    await check(results, 'Deployment -> ReplicaSet -> Pods (controller-manager)', async () => {
      await kubeJson(creds, 'POST', `/apis/apps/v1/namespaces/${ns}/deployments`, {
        body: {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'web' },
          spec: {
            replicas: 2,
            selector: { matchLabels: { app: 'web' } },
            template: {
              metadata: { labels: { app: 'web' } },
              spec: { containers: [{ name: 'pause', image: IMAGES.pause.ref }] },
            },
          },
        },
      });
      return retry(
        async () => {
          const rs = (
            await kubeJson<{ items: Meta[] }>(
              creds,
              'GET',
              `/apis/apps/v1/namespaces/${ns}/replicasets`,
            )
          ).json.items;
          const owner = rs.find((r) =>
            r.metadata.ownerReferences?.some((o) => o.kind === 'Deployment' && o.name === 'web'),
          );
          if (!owner) throw new Error('no ReplicaSet owned by Deployment web yet');
          const pods = (
            await kubeJson<{ items: Meta[] }>(creds, 'GET', `${api}/pods`)
          ).json.items.filter((p) =>
            p.metadata.ownerReferences?.some(
              (o) => o.kind === 'ReplicaSet' && o.name === owner.metadata.name,
            ),
          );
          if (pods.length !== 2)
            throw new Error(`${pods.length}/2 Pods owned by ReplicaSet ${owner.metadata.name}`);
          return `ReplicaSet ${owner.metadata.name} owned by Deployment web; Pods ${pods.map((p) => p.metadata.name).join(', ')} owned by it (${pods.map((p) => (p as { status?: { phase?: string } }).status?.phase ?? '?').join(', ')}: a cluster without workers leaves them Pending)`;
        },
        { timeoutMs: 60_000, intervalMs: 1000, startBeforeDeadline: true },
      );
    });

    await check(results, 'CRD with a CEL validation rule', async () => {
      await kubeJson(creds, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
        body: {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          metadata: { name: crd },
          spec: {
            group,
            scope: 'Namespaced',
            names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
            versions: [
              {
                name: 'v1',
                served: true,
                storage: true,
                schema: {
                  openAPIV3Schema: {
                    type: 'object',
                    properties: {
                      spec: {
                        type: 'object',
                        properties: { size: { type: 'integer' } },
                        'x-kubernetes-validations': [
                          { rule: 'self.size <= 10', message: 'size must be at most 10' },
                        ],
                      },
                    },
                  },
                },
              },
            ],
          },
        },
      });
      const path = `/apis/${group}/v1/namespaces/${ns}/widgets`;
      const widget = (name: string, size: number) => ({
        apiVersion: `${group}/v1`,
        kind: 'Widget',
        metadata: { name },
        spec: { size },
      });
      await retry(
        async () => {
          const r = await kubeRequest(creds, 'GET', path);
          if (r.status !== 200) throw new Error(`CRD not served yet (${r.status})`);
        },
        { timeoutMs: 30_000, intervalMs: 500, startBeforeDeadline: true },
      );
      await kubeJson(creds, 'POST', path, { body: widget('small', 3) });
      const bad = await kubeRequest(creds, 'POST', path, { body: widget('big', 11) });
      if (bad.status !== 422 || !bad.body.includes('size must be at most 10'))
        throw new Error(`bad Widget got ${bad.status}, want 422 with the CEL message`);
      return 'size 3 accepted; size 11 rejected with 422 "size must be at most 10"';
    });

    await check(results, 'server-side apply conflict', async () => {
      const apply = (manager: string, value: string) =>
        kubeRequest(creds, 'PATCH', `${api}/configmaps/ssa?fieldManager=${manager}`, {
          contentType: 'application/apply-patch+yaml',
          body: JSON.stringify({
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'ssa' },
            data: { owner: value },
          }),
        });
      const a = await apply('alice', 'alice');
      if (a.status !== 201 && a.status !== 200) throw new Error(`alice's apply got ${a.status}`);
      const b = await apply('bob', 'bob');
      if (b.status !== 409) throw new Error(`bob's conflicting apply got ${b.status}, want 409`);
      return `bob's apply of data.owner got 409: ${(JSON.parse(b.body) as { message?: string }).message?.slice(0, 120)}`;
    });

    await check(results, 'watch', async () => {
      const ev = await watchFor(
        creds,
        `${api}/configmaps`,
        (e) => e.type === 'ADDED' && e.object.metadata?.name === 'watched',
        20_000,
        () => {
          void kubeJson(creds, 'POST', `${api}/configmaps`, {
            body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'watched' } },
          });
        },
      );
      return `saw ${ev.type} ${ev.name}`;
    });

    await check(results, 'Secret encrypted at rest', async () => {
      const value = `s3cret-${randomBytes(4).toString('hex')}`;
      await kubeJson(creds, 'POST', `${api}/secrets`, {
        body: {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'enc' },
          stringData: { v: value },
        },
      });
      const { json } = await kubeJson<{ data?: { v?: string } }>(
        creds,
        'GET',
        `${api}/secrets/enc`,
      );
      if (Buffer.from(json.data?.v ?? '', 'base64').toString() !== value)
        throw new Error('Secret did not read back through the API');
      const r = await etcdSession.exec(
        etcdctlArgv(inv, 'get', `/registry/secrets/${ns}/enc`, '-w', 'json'),
        { timeoutMs: 20_000 },
      );
      const kv = (JSON.parse(r.stdout) as { kvs?: { value: string }[] }).kvs?.[0];
      if (!kv) throw new Error('the Secret is not in etcd');
      const raw = Buffer.from(kv.value, 'base64');
      const prefix = raw.subarray(0, encrypted.length).toString('latin1');
      if (prefix !== encrypted)
        throw new Error(`etcd value starts with ${JSON.stringify(prefix)}, not ${encrypted}`);
      if (raw.includes(Buffer.from(value))) throw new Error('the plaintext is visible in etcd');
      return `reads back through the API; etcd holds ${encrypted}… without the plaintext`;
    });
  } finally {
    await check(results, 'cleanup', async () => {
      await kubeJson(creds, 'DELETE', `/api/v1/namespaces/${ns}`, { allow: [404] });
      await kubeJson(
        creds,
        'DELETE',
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd}`,
        { allow: [404] },
      );
      return `deleted namespace ${ns} and CRD ${crd}`;
    });
  }
  return results;
}
