// Drill 3.C4: every kube-apiserver stopped, the controllers left running. What the controllers do
// (watch errors, Lease renewal failing, leader election lost, systemd restarting them), then the
// level-triggered payoff: a Deployment scaled right after the apiservers return is reconciled,
// timed from /readyz ok to the ReplicaSet's replica count, and the Leases held again.
import { iso } from './connected.ts';
import {
  kubeJson,
  kubeRequest,
  withServer,
  type KubeCreds,
} from '../../core/transport/kube-api.ts';
import { APISERVER_PORT } from '../../lib/constants.ts';
import { retry } from '../../lib/retry.ts';
import { LEASES, type ComponentName } from '../../core/components/registry/index.ts';
import { readLease } from '../../core/gates/leases.ts';
import { kubectl } from './kubectl.ts';
import { blastRadius, readyzOn, unitState, type UnitState } from './probes.ts';
import type { RecoveryStep } from './report.ts';
import type { DrillDef, DrillEnv } from './runner.ts';
import type { BlastItem } from './run-report.ts';
import { unitOf } from '../../lib/unit.ts';

/** What kubectl says when no apiserver answers at the cluster endpoint: a host's address refuses; a VIP nobody holds has no route. */
export const UNREACHABLE = /refused|no route to host|i\/o timeout/;

export const C4_NAMESPACE = 'hardwire-drill-c4';
export const C4_DEPLOYMENT = 'level-triggered';
const CONTROLLERS: ComponentName[] = ['kube-controller-manager', 'kube-scheduler'];
const NS = `/api/v1/namespaces/${C4_NAMESPACE}`;
const DEPLOY = `/apis/apps/v1/namespaces/${C4_NAMESPACE}/deployments`;

/** `fn` until it gives a value (undefined or an error: not yet). */
function until<T>(
  what: string,
  timeoutMs: number,
  everyMs: number,
  fn: () => Promise<T | undefined>,
): Promise<T> {
  return retry(
    async () => {
      const v = await fn().catch(() => undefined);
      if (v === undefined) throw new Error('not yet');
      return v;
    },
    {
      timeoutMs,
      intervalMs: everyMs,
      onTimeout: () => {
        throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
      },
    },
  );
}

interface Rs {
  spec?: { replicas?: number };
  status?: { replicas?: number };
}
const replicaSets = async (creds: KubeCreds) =>
  (
    await kubeJson<{ items: Rs[] }>(
      creds,
      'GET',
      `/apis/apps/v1/namespaces/${C4_NAMESPACE}/replicasets?labelSelector=app%3D${C4_DEPLOYMENT}`,
    )
  ).json.items;

function deployment(replicas: number): unknown {
  const labels = { app: C4_DEPLOYMENT };
  // No kubelet in this lab: the pods stay Pending; the ReplicaSet's count of created Pod objects is what the controller reconciles.
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: C4_DEPLOYMENT, labels },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: 'pause', image: 'registry.k8s.io/pause:3.10' }] },
      },
    },
  };
}

async function deleteNamespace(env: DrillEnv, wait: boolean): Promise<void> {
  await kubeRequest(env.creds, 'DELETE', NS);
  if (wait)
    await until(`namespace ${C4_NAMESPACE} gone`, 120_000, 1000, async () =>
      (await kubeRequest(env.creds, 'GET', NS)).status === 404 ? true : undefined,
    );
}

export function apiserverDownDrill(): DrillDef {
  const before = new Map<string, UnitState>();
  const key = (host: string, unit: string) => `${host}/${unit}`;
  const units = async (env: DrillEnv) =>
    Promise.all(
      env.inv.controlPlaneHosts.flatMap((h) =>
        CONTROLLERS.map(async (c) => ({
          host: h.name,
          unit: c,
          state: await unitState(env.session(h.name), unitOf(c)),
        })),
      ),
    );
  return {
    name: 'apiserver-down',
    title: 'Drill 3.C4: every kube-apiserver down, the controllers up',
    whoLogs:
      "the controllers are the apiserver's clients: their reflectors lose their watches, leader election cannot renew its Lease, and the leader gives up after its renew deadline and exits; systemd (Restart=on-failure) starts it again",
    capture: { label: 'connection refused', units: CONTROLLERS, pattern: 'connection refused' },
    also: [
      // Not required: a refused watch is retried quietly ("Watch failed - backing off" at -v=4), and
      // the leader exits within its renew deadline, so at the default verbosity none may show.
      {
        label: 'watch errors',
        units: CONTROLLERS,
        pattern: '"Failed to watch"|Watch failed|watch-list failed',
      },
      {
        label: 'Lease renewal failing',
        units: CONTROLLERS,
        pattern:
          'Failed to renew lease|Failed to update lock|Failed to update lease|rror retrieving (resource|lease) lock',
        required: true,
      },
      {
        label: 'leader election lost',
        units: CONTROLLERS,
        pattern: 'eaderelection lost',
        required: true,
      },
    ],
    // Renew deadline 10 s, then exit, then RestartSec=5: 35 s shows systemd's restart.
    minObserveMs: 35_000,
    async prepare(env) {
      if ((await kubeRequest(env.creds, 'GET', NS)).status !== 404)
        await deleteNamespace(env, true);
      await kubeJson(env.creds, 'POST', '/api/v1/namespaces', {
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: C4_NAMESPACE } },
      });
      await until("the namespace's default service account", 60_000, 1000, async () =>
        (await kubeRequest(env.creds, 'GET', `${NS}/serviceaccounts/default`)).status === 200
          ? true
          : undefined,
      );
      await kubeJson(env.creds, 'POST', DEPLOY, { body: deployment(1) });
      await until('the ReplicaSet at 1 replica', 90_000, 1000, async () =>
        (await replicaSets(env.creds))[0]?.status?.replicas === 1 ? true : undefined,
      );
      for (const u of await units(env)) before.set(key(u.host, u.unit), u.state);
      env.timeline.mark(`Deployment ${C4_NAMESPACE}/${C4_DEPLOYMENT} reconciled at 1 replica`);
    },
    async break(env) {
      const hosts = env.inv.controlPlaneHosts.map((h) => h.name);
      // The apiserver stops listening as the stop begins, not when systemd reports it stopped.
      const at = Date.now();
      await Promise.all(
        hosts.map((h) =>
          env.ctx.wet.run(h, 'systemctl stop kube-apiserver.service', (w) =>
            w.exec(['systemctl', 'stop', 'kube-apiserver.service'], { timeoutMs: 180_000 }),
          ),
        ),
      );
      return {
        hosts,
        action: `systemctl stop kube-apiserver on ${hosts.join(', ')}; controllers left running`,
        at,
      };
    },
    symptom: async (env) => {
      const r = await kubectl(env.adminKubeconfig, [
        'get',
        'deployment',
        C4_DEPLOYMENT,
        '-n',
        C4_NAMESPACE,
      ]);
      // Through admin.conf: refused at a host's address, or, behind a VIP, no host holds the address
      // once every apiserver is down (each kube-vip lost its Lease), so the dial finds no route.
      return r.code !== 0 && UNREACHABLE.test(r.output) ? r : undefined;
    },
    async blastRadius(env) {
      const items: BlastItem[] = (await blastRadius(env)).filter(
        (x) => !x.what.startsWith('Lease'),
      );
      for (const u of await units(env)) {
        const b = before.get(key(u.host, u.unit));
        const restarted = b !== undefined && u.state.nRestarts > b.nRestarts;
        items.push({
          what: `${u.unit} on ${u.host}`,
          ok: u.state.activeState === 'active',
          detail: `${u.state.activeState}; NRestarts ${b?.nRestarts ?? '?'} -> ${u.state.nRestarts}${restarted ? ` (systemd restarted it; process started ${u.state.execMainStart})` : ' (not restarted)'}`,
        });
      }
      return items;
    },
    async recover(env) {
      const steps: RecoveryStep[] = [];
      const hosts = env.inv.controlPlaneHosts;
      steps.push({
        step: `systemctl start kube-apiserver on ${hosts.map((h) => h.name).join(', ')}`,
        why: 'the only thing broken; the controllers reconnect by themselves',
        at: new Date().toISOString(),
      });
      await Promise.all(
        hosts.map((h) =>
          env.ctx.wet.run(h.name, 'systemctl start kube-apiserver.service', (w) =>
            w.exec(['systemctl', 'start', '--no-block', 'kube-apiserver.service'], {
              timeoutMs: 60_000,
            }),
          ),
        ),
      );
      // The first apiserver ready takes every call that follows: the admin kubeconfig's own server may still be refusing.
      const first = await until('an apiserver /readyz ok', 180_000, 250, async () => {
        const ok = (
          await Promise.all(
            hosts.map(async (h) => ((await readyzOn(env, h.address)).ok ? h : undefined)),
          )
        ).find((h) => h !== undefined);
        return (
          ok && {
            at: Date.now(),
            creds: withServer(env.creds, `https://${ok.address}:${APISERVER_PORT}`),
          }
        );
      });
      const { at: readyAt, creds } = first;
      await kubeJson(creds, 'PATCH', `${DEPLOY}/${C4_DEPLOYMENT}/scale`, {
        body: { spec: { replicas: 3 } },
        contentType: 'application/merge-patch+json',
      });
      const scaledAt = Date.now();
      steps.push({
        step: `scale ${C4_NAMESPACE}/${C4_DEPLOYMENT} to 3 right after /readyz ok (${iso(readyAt)})`,
        why: 'controllers are level-triggered: they reconcile the state they find, not the events they missed',
        at: iso(scaledAt),
      });
      const rs = async (f: (r: Rs) => boolean) =>
        until('the ReplicaSet at 3', 180_000, 250, async () =>
          (await replicaSets(creds)).some(f) ? Date.now() : undefined,
        );
      const specAt = await rs((r) => r.spec?.replicas === 3);
      const statusAt = await rs((r) => r.status?.replicas === 3);
      const leaseAt: Record<string, number> = {};
      for (const l of LEASES) {
        leaseAt[l.lease] = await until(`Lease ${l.lease} renewed`, 120_000, 500, async () => {
          const s = await readLease(creds, l.lease);
          return s.holder && Date.parse(s.renewTime) > readyAt ? Date.now() : undefined;
        });
      }
      steps.push({
        step: `ReplicaSet spec 3 after ${specAt - readyAt} ms, 3 Pod objects after ${statusAt - readyAt} ms; Leases renewed after ${Object.entries(
          leaseAt,
        )
          .map(([n, t]) => `${n} ${t - readyAt} ms`)
          .join(', ')}`,
        why: 'from /readyz ok',
        at: iso(statusAt),
      });
      const detail = {
        readyAt: iso(readyAt),
        scaledAt: iso(scaledAt),
        rsSpecReplicasMs: specAt - readyAt,
        rsStatusReplicasMs: statusAt - readyAt,
        leaseHeldMs: Object.fromEntries(Object.entries(leaseAt).map(([n, t]) => [n, t - readyAt])),
      };
      const md = [
        '## Level-triggered payoff',
        '',
        `/readyz ok at ${detail.readyAt}; scaled to 3 at ${detail.scaledAt}.`,
        '',
        '| from /readyz ok to | ms |',
        '|---|---|',
        `| ReplicaSet .spec.replicas = 3 (deployment controller) | ${detail.rsSpecReplicasMs} |`,
        `| ReplicaSet .status.replicas = 3 (3 Pod objects, Pending: no kubelet) | ${detail.rsStatusReplicasMs} |`,
        ...Object.entries(detail.leaseHeldMs).map(
          ([n, ms]) => `| Lease ${n} held and renewed | ${ms} |`,
        ),
        '',
        'The reconcile waits for a leader: a candidate that has just seen a Lease record treats it as valid for one lease duration (15 s) from when *it* observed it, whatever its renewTime says (`k8s.io/client-go@v0.36.3/tools/leaderelection/leaderelection.go:536` isLeaseValid, used at :480), so the controllers act about 15 s + one retry after the apiservers return.',
        '',
      ];
      return { steps, wets: [], extra: { detail, md } };
    },
    cleanup: (env) => deleteNamespace(env, false).catch(() => undefined),
  };
}
