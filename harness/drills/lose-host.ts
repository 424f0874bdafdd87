// Issue 41's drill: power off one control-plane host of a lab and watch the cluster carry on. Each
// step is read from the API (or the survivors' kube-proxy) as it happens, with the line of
// Kubernetes or kube-vip that takes it: the VIP moves, the lost Node goes Unknown, its taints, its
// Pods marked NotReady, the eviction of a Pod without a toleration of its own, a new Pod placed on
// a survivor. Then the host boots again and every gate must be green, with nothing done by hand.
import { InputError, StepError } from '../../lib/errors.ts';
import type { Inventory } from '../../core/inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import { adminCreds, adminKubeconfigPath } from '../../core/apply/creds.ts';
import { kubeJson, type KubeCreds } from '../../core/transport/kube-api.ts';
import { clusterStateDir } from '../../core/pki/store.ts';
import { runGateChecks } from '../../core/gates/checks.ts';
import type { CheckResult } from '../../core/gates/smoke.ts';
import { localHttp } from '../../core/gates/local.ts';
import { IMAGES } from '../../core/components/images.ts';
import { KUBE_VIP_LEASE, KUBE_VIP_MODULE } from '../../core/components/models/kube-vip.ts';
import { labConnect, labInventoryPath, labNameOf, labStart, labStop } from '../lab/index.ts';
import { iso, sleep, withConnected, type Connection } from './connected.ts';
import { kubectl } from './kubectl.ts';

const K = 'k8s.io/kubernetes@v1.36.3';
/** Where each step is taken; test/lose-host-citations re-opens every one. */
export const CITES = {
  vip: `${KUBE_VIP_MODULE}/pkg/cluster/clusterLeaderElection.go:262 (a holder that stops renewing loses the Lease after --leaseDuration)`,
  unknown: `${K}/pkg/controller/nodelifecycle/node_lifecycle_controller.go:953 ("Kubelet stopped posting node status.", after --node-monitor-grace-period, default 50 s at ${K}/pkg/controller/nodelifecycle/config/v1alpha1/defaults.go:46)`,
  noSchedule: `${K}/pkg/controller/nodelifecycle/node_lifecycle_controller.go:90 (Ready Unknown maps to the unreachable taint; NoSchedule keeps new Pods off)`,
  noExecute: `${K}/pkg/controller/nodelifecycle/node_lifecycle_controller.go:629 (doNoExecuteTaintingPass adds unreachable:NoExecute)`,
  podsNotReady: `${K}/pkg/controller/util/node/controller_utils.go:121 (MarkPodsNotReady: Services stop sending them traffic)`,
  eviction: `${K}/pkg/controller/tainteviction/taint_eviction.go:489 (deletion queued for the taint's time plus the Pod's tolerationSeconds, 300 s by default at ${K}/plugin/pkg/admission/defaulttolerationseconds/admission.go:45)`,
  reachable: `${K}/pkg/controller/nodelifecycle/node_lifecycle_controller.go:1240 (markNodeAsReachable removes the taint when the kubelet posts again)`,
} as const;
/** Steps the drill reads that no controller line takes: a new Pod placed (the NoSchedule taint's effect), every gate green. */
const NOT_CITED = { newcomer: CITES.noSchedule, settled: 'hardwire verify: every gate' } as const;

export interface Step {
  /** Which step (CITES' key, or newcomer: a new Pod placed on a survivor). */
  key: keyof typeof CITES | keyof typeof NOT_CITED;
  at: string;
  /** Seconds after the power-off. */
  afterS: number;
  what: string;
  cite: string;
}

export interface LoseHostReport {
  drill: 'lose-host';
  host: string;
  vip: string | null;
  holdS: number;
  poweredOffAt: string;
  steps: Step[];
  /** Per survivor: samples Ready, samples whose Lease was renewed within 40 s, of all samples. */
  survivors: { host: string; ready: number; leaseFresh: number; proxySyncedAfterOff: boolean }[];
  samples: number;
  kubectlOk: number;
  recovered: boolean;
  checks: CheckResult[];
}

const NS = 'hardwire-drill-lose';

interface NodeJson {
  metadata: { name: string };
  spec: { taints?: { key: string; effect: string }[] };
  status: { conditions?: { type: string; status: string; message?: string }[] };
}
interface PodJson {
  metadata: { deletionTimestamp?: string };
  spec: { nodeName?: string };
  status: { phase?: string; conditions?: { type: string; status: string }[] };
}

const readyOf = (n: NodeJson) => n.status.conditions?.find((c) => c.type === 'Ready');

async function get<T>(creds: KubeCreds, path: string): Promise<T | undefined> {
  try {
    const r = await kubeJson<T>(creds, 'GET', path, { allow: [404] });
    return r.status === 200 ? r.json : undefined;
  } catch {
    return undefined;
  }
}

function pod(name: string, node?: string): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, labels: { app: name } },
    spec: {
      ...(node ? { nodeSelector: { 'kubernetes.io/hostname': node } } : {}),
      containers: [{ name: 'c', image: IMAGES.busybox.ref, command: ['sleep', '3600'] }],
      terminationGracePeriodSeconds: 1,
    },
  };
}

/** The lab the inventory belongs to, and the host: refused (one line, exit 2) before anything is touched. */
export function loseHostTarget(
  inv: Inventory,
  host: string | undefined,
): { lab: string; stateDir: string; host: string } {
  const paths = labInventoryPath(inv.file);
  if (!paths || labNameOf(inv) !== paths.name)
    throw new InputError(
      '--inventory',
      `${inv.file} is not a lab's inventory; lose-host powers a lab host off and on ("hardwire lab up" makes one)`,
    );
  const h = host ?? inv.controlPlaneHosts[0]!.name;
  if (!inv.controlPlaneHosts.some((x) => x.name === h))
    throw new InputError(
      '--host',
      `"${h}" is not a control-plane host of this inventory; use one of ${inv.controlPlaneHosts.map((x) => x.name).join(', ')}`,
    );
  if (inv.controlPlaneHosts.length < 2)
    throw new InputError(
      '--host',
      `${h} is the only control-plane host: losing it loses the API, with nothing to carry on; use a lab of 3 hosts`,
    );
  return { lab: paths.name, stateDir: paths.stateDir, host: h };
}

async function proxySyncedAt(lab: { name: string; stateDir: string }, host: string) {
  const s = await labConnect(host, lab);
  try {
    const m = await localHttp(s, 10249, '/metrics');
    const at =
      /^kubeproxy_sync_proxy_rules_last_timestamp_seconds\{ip_family="IPv4"\} (\S+)$/m.exec(
        m.body,
      )?.[1];
    return at === undefined ? 0 : Number(at) * 1000;
  } finally {
    await s.close();
  }
}

export async function loseHost(
  inv: Inventory,
  stateDir: string,
  opts: Connection & { host?: string; holdS: number },
  log: Logger,
): Promise<LoseHostReport> {
  const t = loseHostTarget(inv, opts.host);
  const lab = { name: t.lab, stateDir: t.stateDir };
  const clusterDir = clusterStateDir(stateDir, inv);
  const creds = adminCreds(clusterDir);
  const survivors = inv.hosts.filter((h) => h.name !== t.host && h.isWorker).map((h) => h.name);

  log.step('baseline: every gate green');
  const base = await withConnected(inv, stateDir, opts, log, (ctx) => runGateChecks(ctx));
  const bad = base.filter((c) => !c.ok);
  if (bad.length)
    throw new StepError(
      'lose-host',
      `not green before the drill: ${bad[0]!.name}: ${bad[0]!.detail}`,
    );

  // A Pod of the drill's own on the lost host, with no toleration of its own: the eviction to watch.
  const victim = `victim-${t.host}`;
  await kubeJson(creds, 'POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
    allow: [409],
  });
  await kubeJson(creds, 'DELETE', `/api/v1/namespaces/${NS}/pods/${victim}`, { allow: [404] });
  await kubeJson(creds, 'DELETE', `/api/v1/namespaces/${NS}/pods/newcomer`, { allow: [404] });
  for (
    let i = 0;
    (await get(creds, `/api/v1/namespaces/${NS}/pods/${victim}`)) !== undefined;
    i++
  ) {
    if (i > 60) throw new StepError('lose-host', `an old ${NS}/${victim} is still terminating`);
    await sleep(1000);
  }
  await kubeJson(creds, 'POST', `/api/v1/namespaces/${NS}/pods`, { body: pod(victim, t.host) });
  for (let i = 0; ; i++) {
    const p = await get<PodJson>(creds, `/api/v1/namespaces/${NS}/pods/${victim}`);
    if (p?.status.phase === 'Running') break;
    if (i > 120) throw new StepError('lose-host', `${NS}/${victim} not Running on ${t.host}`);
    await sleep(1000);
  }
  const leasePath = `/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/${KUBE_VIP_LEASE}`;
  const vipHolder = async () =>
    (await get<{ spec: { holderIdentity?: string } }>(creds, leasePath))?.spec.holderIdentity;
  const heldBefore = inv.cluster.apiServerVip ? await vipHolder() : undefined;
  const proxyBefore = new Map<string, number>();
  for (const s of survivors) proxyBefore.set(s, await proxySyncedAt(lab, s));

  log.step(`power off ${t.host} (lab stop) and watch for ${opts.holdS} s`);
  await labStop(t.host, lab);
  const off = Date.now();
  const steps: Step[] = [];
  const seen = new Set<string>();
  const step = (key: Step['key'], what: string) => {
    if (seen.has(key)) return;
    seen.add(key);
    const s: Step = {
      key,
      at: iso(),
      afterS: Math.round((Date.now() - off) / 1000),
      what,
      cite:
        key in NOT_CITED
          ? NOT_CITED[key as keyof typeof NOT_CITED]
          : CITES[key as keyof typeof CITES],
    };
    steps.push(s);
    log.info(`  +${s.afterS} s ${what}`);
  };
  const tally = new Map(survivors.map((s) => [s, { ready: 0, leaseFresh: 0 }]));
  let samples = 0;
  let kubectlOk = 0;
  let newcomer = false;
  while (Date.now() - off < opts.holdS * 1000) {
    samples++;
    const k = await kubectl(adminKubeconfigPath(clusterDir), ['get', 'nodes', '-o', 'name']);
    if (k.code === 0) kubectlOk++;
    if (heldBefore !== undefined) {
      const h = await vipHolder();
      if (h && h !== heldBefore)
        step('vip', `${inv.cluster.apiServerVip!.address} moved from ${heldBefore} to ${h}`);
      else if (heldBefore !== t.host)
        step('vip', `${inv.cluster.apiServerVip!.address} stayed on ${heldBefore}`);
    }
    const nodes = (await get<{ items: NodeJson[] }>(creds, '/api/v1/nodes'))?.items ?? [];
    const lost = nodes.find((n) => n.metadata.name === t.host);
    const r = lost && readyOf(lost);
    if (r && r.status !== 'True')
      step('unknown', `${t.host} Ready=${r.status}: ${r.message ?? ''}`);
    const taints = lost?.spec.taints ?? [];
    if (taints.some((x) => x.key === 'node.kubernetes.io/unreachable' && x.effect === 'NoSchedule'))
      step('noSchedule', `${t.host} tainted node.kubernetes.io/unreachable:NoSchedule`);
    if (taints.some((x) => x.key === 'node.kubernetes.io/unreachable' && x.effect === 'NoExecute'))
      step('noExecute', `${t.host} tainted node.kubernetes.io/unreachable:NoExecute`);
    const v = await get<PodJson>(creds, `/api/v1/namespaces/${NS}/pods/${victim}`);
    if (v?.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'False'))
      step('podsNotReady', `${NS}/${victim} Ready=False`);
    if (v?.metadata.deletionTimestamp || (seen.has('noExecute') && v === undefined))
      step(
        'eviction',
        `${NS}/${victim} evicted (deletionTimestamp ${v?.metadata.deletionTimestamp ?? 'gone'})`,
      );
    for (const n of nodes.filter((x) => survivors.includes(x.metadata.name))) {
      if (readyOf(n)?.status === 'True') tally.get(n.metadata.name)!.ready++;
    }
    const leases =
      (
        await get<{ items: { metadata: { name: string }; spec: { renewTime?: string } }[] }>(
          creds,
          '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
        )
      )?.items ?? [];
    for (const l of leases.filter((x) => survivors.includes(x.metadata.name)))
      if (Date.now() - Date.parse(l.spec.renewTime ?? '') < 40_000)
        tally.get(l.metadata.name)!.leaseFresh++;
    if (seen.has('noSchedule') && !newcomer) {
      newcomer = true;
      await kubeJson(creds, 'POST', `/api/v1/namespaces/${NS}/pods`, { body: pod('newcomer') });
    }
    if (newcomer && !seen.has('newcomer')) {
      const p = await get<PodJson>(creds, `/api/v1/namespaces/${NS}/pods/newcomer`);
      if (p?.status.phase === 'Running') step('newcomer', `a new Pod runs on ${p.spec.nodeName}`);
    }
    await sleep(2000);
  }
  const proxy = new Map<string, boolean>();
  for (const s of survivors) proxy.set(s, (await proxySyncedAt(lab, s)) > off);

  log.step(`power ${t.host} on again (lab start); nothing else is done`);
  await labStart(t.host, lab);
  let back = false;
  for (const end = Date.now() + 300_000; Date.now() < end && !back; await sleep(2000)) {
    const n = await get<NodeJson>(creds, `/api/v1/nodes/${t.host}`);
    back =
      n !== undefined &&
      readyOf(n)?.status === 'True' &&
      !(n.spec.taints ?? []).some((x) => x.key === 'node.kubernetes.io/unreachable');
  }
  if (back) step('reachable', `${t.host} Ready again, its unreachable taints removed`);
  // Every gate, as verify runs them, until all are green or the gate timeout: the rejoined kubelet
  // restarts its Pods in new sandboxes (new IPs) a few seconds after its Node is Ready.
  log.step('every gate, as verify runs them, until green');
  let checks: CheckResult[] = [];
  for (const end = Date.now() + opts.gateTimeoutMs; back; await sleep(5000)) {
    checks = await withConnected(inv, stateDir, opts, log, (ctx) => runGateChecks(ctx));
    if (checks.every((c) => c.ok) || Date.now() > end) break;
  }
  if (back) step('settled', `every gate green again`);
  await kubeJson(creds, 'DELETE', `/api/v1/namespaces/${NS}`, { allow: [404] }).catch(
    () => undefined,
  );
  return {
    drill: 'lose-host',
    host: t.host,
    vip: inv.cluster.apiServerVip?.address ?? null,
    holdS: opts.holdS,
    poweredOffAt: iso(off),
    steps,
    survivors: survivors.map((s) => ({
      host: s,
      ...tally.get(s)!,
      proxySyncedAfterOff: proxy.get(s)!,
    })),
    samples,
    kubectlOk,
    recovered: back && checks.length > 0 && checks.every((c) => c.ok),
    checks,
  };
}

export function loseHostMarkdown(r: LoseHostReport): string {
  return [
    `# Drill lose-host: ${r.host} powered off for ${r.holdS} s`,
    '',
    `The API endpoint: ${r.vip ? `the VIP ${r.vip} (kube-vip)` : "the first control-plane host's address (no cluster.apiServerVip)"}. Powered off at ${r.poweredOffAt}.`,
    '',
    '| after | what happened | taken at |',
    '|---|---|---|',
    ...r.steps.map((s) => `| +${s.afterS} s | ${s.what} | ${s.cite} |`),
    '',
    `${r.samples} samples, one every 2 s or so; kubectl with the operator's kubeconfig answered ${r.kubectlOk} of them.`,
    '',
    '| survivor | Ready | its Lease renewed within 40 s | kube-proxy synced after the power-off |',
    '|---|---|---|---|',
    ...r.survivors.map(
      (s) =>
        `| ${s.host} | ${s.ready}/${r.samples} | ${s.leaseFresh}/${r.samples} | ${s.proxySyncedAfterOff ? 'yes' : 'no'} |`,
    ),
    '',
    `Recovered: ${r.recovered ? 'yes' : 'no'}: ${r.checks.filter((c) => c.ok).length} of ${r.checks.length} gate checks green after the host came back.`,
    ...r.checks.filter((c) => !c.ok).map((c) => `- FAILED ${c.name}: ${c.detail}`),
    '',
  ].join('\n');
}
