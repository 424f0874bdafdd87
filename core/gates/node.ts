// The workers' gates: containerd serves its CRI images, each node is Ready, kube-proxy has synced.
// Each failure names its host and carries the unit's journal tail: the real error.
import { adminCreds } from '../apply/creds.ts';
import { kubeJson } from '../transport/kube-api.ts';
import type { ReadSession as Session } from '../transport/index.ts';
import { StepError } from '../../lib/errors.ts';
import { retry } from '../../lib/retry.ts';
import { journalTail } from './journal.ts';
import { localHttp, unitState } from './local.ts';
import { POLL_MS } from './wait.ts';
import type { Gate, GateContext } from '../components/registry/types.ts';
import { IMAGES } from '../components/images.ts';
import { BIN } from '../components/models/types.ts';
import { unitOf } from '../../lib/unit.ts';

function sessionOf(ctx: GateContext, host: string): Session {
  const s = ctx.sessions.get(host);
  if (!s) throw new Error(`no SSH session for ${host}`);
  return s;
}

const workers = (ctx: GateContext, hosts: string[]) =>
  ctx.inv.workerHosts
    .filter((h) => hosts.length === 0 || hosts.includes(h.name))
    .map((h) => h.name);

/** Polls `probe` on each host until it returns a detail line; on timeout, its last error with the unit's journal. */
async function perHost(
  ctx: GateContext,
  hosts: string[],
  component: string,
  probe: (s: Session, host: string) => Promise<string>,
): Promise<string[]> {
  return Promise.all(
    hosts.map(async (host) => {
      const s = sessionOf(ctx, host);
      return retry(
        async () => {
          const u = await unitState(s, unitOf(component));
          if (u.active === 'failed') throw new Error(`${unitOf(component)} is failed (${u.sub})`);
          return probe(s, host);
        },
        {
          timeoutMs: ctx.opts.gateTimeoutMs,
          intervalMs: POLL_MS * 4,
          startBeforeDeadline: true,
          onTimeout: async (last) => {
            const msg = last instanceof Error ? last.message : String(last);
            throw new StepError(`gate ${component}`, msg, {
              host,
              detail: await journalTail(s, unitOf(component)),
            });
          },
        },
      );
    }),
  );
}

/** containerd answers on its socket and holds every locally built image (imported by its ExecStartPost). */
async function containerdReady(s: Session): Promise<string> {
  // Both in one round trip (two channels of the same connection).
  const [v, ls] = await Promise.all([
    s.exec([`${BIN}/ctr`, 'version'], { allowFail: true, timeoutMs: 10_000 }),
    s.exec([`${BIN}/ctr`, '-n', 'k8s.io', 'images', 'ls', '-q'], {
      allowFail: true,
      timeoutMs: 10_000,
    }),
  ]);
  const server = /Server:\s*\n\s*Version:\s*(\S+)/.exec(v.stdout)?.[1];
  if (v.code !== 0 || !server)
    throw new Error(
      `ctr version: containerd does not answer on its socket: ${(v.stderr || v.stdout).trim().split('\n').pop()}`,
    );
  const missing = Object.values(IMAGES)
    .map((i) => i.ref)
    .filter((r) => !ls.stdout.split('\n').includes(r));
  if (missing.length > 0)
    throw new Error(
      `containerd ${server} lacks image(s) ${missing.join(', ')} in namespace k8s.io`,
    );
  return `containerd ${server}, ${Object.keys(IMAGES).length} images imported`;
}

export const containerdGate: Gate = {
  proves:
    'containerd answers `ctr version` on its socket and holds every locally built image in namespace k8s.io',
  async wait(ctx, hosts) {
    const t = workers(ctx, hosts);
    await perHost(ctx, t, 'containerd', containerdReady);
    ctx.log.info(`  containerd ready with its images: ${t.join(', ')}`);
  },
  checks: (ctx) =>
    ctx.inv.workerHosts.map((h) => ({
      name: `containerd ${h.name}: socket answers, images imported`,
      run: () => containerdReady(sessionOf(ctx, h.name)),
    })),
};

interface NodeObj {
  spec?: { podCIDR?: string };
  status?: {
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    nodeInfo?: { kubeletVersion?: string; containerRuntimeVersion?: string };
  };
}

async function nodeReady(ctx: GateContext, host: string): Promise<string> {
  const r = await kubeJson<NodeObj>(adminCreds(ctx.clusterDir), 'GET', `/api/v1/nodes/${host}`, {
    allow: [404],
  });
  if (r.status === 404) throw new Error(`Node ${host} is not registered`);
  const ready = r.json.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status !== 'True')
    throw new Error(
      `Node ${host} Ready=${ready?.status ?? 'unknown'}: ${ready?.reason ?? ''} ${ready?.message ?? ''}`.trim(),
    );
  const want = ctx.inv.workerHosts.find((h) => h.name === host)?.podCidr?.text;
  if (r.json.spec?.podCIDR !== want)
    throw new Error(
      `Node ${host} has podCIDR ${r.json.spec?.podCIDR ?? 'unset'}, but its CNI bridge assigns ${want} (inventory)`,
    );
  const info = r.json.status?.nodeInfo;
  return `Ready, podCIDR ${want}, kubelet ${info?.kubeletVersion}, ${info?.containerRuntimeVersion}`;
}

export const nodeReadyGate: Gate = {
  proves: 'its Node is registered and Ready (read through the API as admin)',
  async wait(ctx, hosts) {
    const t = workers(ctx, hosts);
    const got = await perHost(ctx, t, 'kubelet', (_s, host) => nodeReady(ctx, host));
    ctx.log.info(`  nodes Ready: ${t.map((h, i) => `${h} (${got[i]})`).join(', ')}`);
  },
  checks: (ctx) =>
    ctx.inv.workerHosts.map((h) => ({
      name: `kubelet ${h.name}: Node Ready`,
      run: () => nodeReady(ctx, h.name),
    })),
};

/**
 * kube-proxy's /healthz (healthzBindAddress, 0.0.0.0:10256) answers 200, and its rules were written
 * by this process. /healthz alone proves nothing about the rules: it answers 200 from the start,
 * before any sync (SyncLoop marks it updated "in case Sync() never succeeds",
 * K pkg/proxy/nftables/proxier.go:710), and until a queued change is late. What only a successful
 * sync sets is kubeproxy_sync_proxy_rules_last_timestamp_seconds (K pkg/proxy/nftables/proxier.go:1749)
 * on its /metrics (metricsBindAddress, 127.0.0.1:10249): a process whose syncs all fail has none.
 */
async function proxyHealthy(s: Session): Promise<string> {
  const get = (port: number, path: string) =>
    localHttp(s, port, path).catch((err: unknown) => ({
      status: 0,
      body: err instanceof Error ? err.message : String(err),
    }));
  const r = await get(10256, '/healthz');
  if (r.status !== 200)
    throw new Error(
      `kube-proxy /healthz on 127.0.0.1:10256 answered ${r.status} ${r.body.slice(0, 200)}`,
    );
  const m = await get(10249, '/metrics');
  const at = /^kubeproxy_sync_proxy_rules_last_timestamp_seconds\{ip_family="IPv4"\} (\S+)$/m.exec(
    m.body,
  )?.[1];
  if (m.status !== 200 || at === undefined)
    throw new Error(
      `kube-proxy has not written its rules since it started: 127.0.0.1:10249/metrics (${m.status}) has no kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"}`,
    );
  return `/healthz 200, rules synced at ${new Date(Number(at) * 1000).toISOString()}`;
}

export const kubeProxyGate: Gate = {
  proves:
    "kube-proxy's /healthz on 127.0.0.1:10256 answers 200 and its /metrics shows a successful sync of its rules since it started",
  async wait(ctx, hosts) {
    const t = workers(ctx, hosts);
    await perHost(ctx, t, 'kube-proxy', proxyHealthy);
    ctx.log.info(`  kube-proxy synced: ${t.join(', ')}`);
  },
  checks: (ctx) =>
    ctx.inv.workerHosts.map((h) => ({
      name: `kube-proxy ${h.name}: /healthz 200, rules synced`,
      run: () => proxyHealthy(sessionOf(ctx, h.name)),
    })),
};
