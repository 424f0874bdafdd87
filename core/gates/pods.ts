// The workload gates: one probe Pod per worker (busybox httpd serving its own name), a ClusterIP
// Service over them, and the checks a user makes by hand: each Pod Running, its log through the
// apiserver -> kubelet path, `kubectl exec` into it, Pod to Pod across nodes, and the Service by its
// DNS name through CoreDNS and kube-proxy. Each failure names the host and the real error.
import { adminCreds, adminKubeconfigPath } from '../apply/creds.ts';
import { kubeJson, kubeRequest } from '../transport/kube-api.ts';
import type { Inventory } from '../inventory/load.ts';
import { IMAGES } from '../components/images.ts';
import { kubectlPath } from '../components/binaries/cache.ts';
import { StepError } from '../../lib/errors.ts';
import { run } from '../../lib/proc.ts';
import { retry } from '../../lib/retry.ts';
import type { Check, GateContext } from '../components/registry/types.ts';

export const PROBE_NS = 'hardwire-probes';
export const PROBE_SERVICE = 'probe';
const PORT = 8080;
export const probeName = (host: string) => `probe-${host}`;

/** What wire creates: the namespace, a probe Pod pinned to each worker, and the Service over them. */
export function probeObjects(inv: Inventory): object[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: PROBE_NS } },
    ...inv.workerHosts.map((h) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: probeName(h.name), namespace: PROBE_NS, labels: { app: 'hardwire-probe' } },
      spec: {
        // Through the scheduler (not spec.nodeName), so a Running probe proves it places Pods too.
        nodeSelector: { 'kubernetes.io/hostname': h.name },
        containers: [
          {
            name: 'httpd',
            image: IMAGES.busybox.ref,
            command: [
              'sh',
              '-c',
              `mkdir -p /www && hostname > /www/index.html && echo started && exec httpd -f -p ${PORT} -h /www`,
            ],
            ports: [{ containerPort: PORT }],
          },
        ],
        terminationGracePeriodSeconds: 1,
        // Pinned to its node as a DaemonSet's Pod is, it tolerates the node's loss as one does
        // (k8s.io/kubernetes@v1.36.3/pkg/controller/daemon/util/daemonset_util.go:48-66): a bare
        // Pod evicted from a powered-off node is gone for good, and verify would miss it after the
        // node is back. The drill lose-host shows the eviction with a Pod of its own.
        tolerations: ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'].map(
          (key) => ({ key, operator: 'Exists', effect: 'NoExecute' }),
        ),
      },
    })),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: PROBE_SERVICE, namespace: PROBE_NS },
      spec: {
        selector: { app: 'hardwire-probe' },
        ports: [{ protocol: 'TCP', port: 80, targetPort: PORT }],
      },
    },
  ];
}

interface PodObj {
  spec?: { nodeName?: string };
  status?: {
    phase?: string;
    podIP?: string;
    containerStatuses?: {
      ready?: boolean;
      state?: { waiting?: { reason?: string; message?: string } };
    }[];
  };
}

async function podOf(ctx: GateContext, host: string): Promise<PodObj> {
  const r = await kubeJson<PodObj>(
    adminCreds(ctx.clusterDir),
    'GET',
    `/api/v1/namespaces/${PROBE_NS}/pods/${probeName(host)}`,
    { allow: [404] },
  );
  if (r.status === 404) throw new Error(`Pod ${PROBE_NS}/${probeName(host)} does not exist`);
  return r.json;
}

/** The Pod's latest events, newest last: where ErrImagePull or a failed sandbox shows. */
async function events(ctx: GateContext, host: string): Promise<string[]> {
  const r = await kubeJson<{
    items?: { reason?: string; message?: string; lastTimestamp?: string }[];
  }>(
    adminCreds(ctx.clusterDir),
    'GET',
    `/api/v1/namespaces/${PROBE_NS}/events?fieldSelector=involvedObject.name=${probeName(host)}`,
  ).catch(() => undefined);
  return (r?.json.items ?? [])
    .slice(-8)
    .map((e) => `${e.lastTimestamp ?? ''} ${e.reason ?? ''}: ${e.message ?? ''}`);
}

async function running(ctx: GateContext, host: string): Promise<string> {
  const p = await podOf(ctx, host);
  const waiting = p.status?.containerStatuses?.[0]?.state?.waiting;
  if (p.status?.phase !== 'Running' || p.status.containerStatuses?.[0]?.ready !== true) {
    throw new Error(
      `Pod ${PROBE_NS}/${probeName(host)} is ${p.status?.phase ?? 'unknown'}${waiting ? ` (${waiting.reason}: ${waiting.message ?? ''})` : ''}`,
    );
  }
  if (p.spec?.nodeName !== host)
    throw new Error(`Pod ${probeName(host)} runs on ${p.spec?.nodeName}, not ${host}`);
  return `Running on ${host}, ${p.status.podIP}`;
}

async function kubectlExec(ctx: GateContext, host: string, argv: string[]): Promise<string> {
  const r = await run(
    kubectlPath(),
    [
      '--kubeconfig',
      adminKubeconfigPath(ctx.clusterDir),
      '--request-timeout=10s',
      '-n',
      PROBE_NS,
      'exec',
      probeName(host),
      '--',
      ...argv,
    ],
    { step: 'kubectl exec', allowFail: true, timeoutMs: 30_000 },
  );
  if (r.code !== 0)
    throw new Error(
      `kubectl exec ${probeName(host)} -- ${argv.join(' ')}: ${(r.stderr || r.stdout).trim().split('\n').pop()}`,
    );
  return r.stdout.trim();
}

/**
 * An HTTP GET from inside the probe Pod with busybox nc. Not busybox wget: Debian's busybox-static
 * links glibc statically, and its wget (getaddrinfo) dies with SIGSEGV in a Pod (exit 139, seen here).
 */
async function httpGet(ctx: GateContext, host: string, ip: string, port: number): Promise<string> {
  const out = await kubectlExec(ctx, host, [
    'sh',
    '-c',
    'printf "GET / HTTP/1.0\\r\\n\\r\\n" | nc -w 5 "$0" "$1"',
    ip,
    String(port),
  ]).catch((err: unknown) => {
    throw new Error(
      `no HTTP answer from ${ip}:${port} inside ${probeName(host)} (${err instanceof Error ? err.message.split(': ').pop() : String(err)}): is ${ip} routed from ${host}?`,
    );
  });
  return out.split('\n').pop()!.trim();
}

/** Each check once: the log through the apiserver, exec, Pod to Pod across nodes, the Service by name. */
export function probeChecks(ctx: GateContext): Check[] {
  const ws = ctx.inv.workerHosts;
  const domain = ctx.inv.cluster.dnsDomain;
  return ws.flatMap((h, i) => {
    const peer = ws[(i + 1) % ws.length]!;
    return [
      { name: `probe Pod on ${h.name}: Running`, run: () => running(ctx, h.name) },
      {
        name: `probe Pod on ${h.name}: kubectl logs (apiserver -> kubelet, serving cert verified)`,
        run: async () => {
          const r = await kubeRequest(
            adminCreds(ctx.clusterDir),
            'GET',
            `/api/v1/namespaces/${PROBE_NS}/pods/${probeName(h.name)}/log`,
          );
          if (r.status !== 200 || !r.body.includes('started'))
            throw new Error(
              `GET …/pods/${probeName(h.name)}/log answered ${r.status}: ${r.body.slice(0, 300)}`,
            );
          return 'log says "started"';
        },
      },
      {
        name: `probe Pod on ${h.name}: kubectl exec, then Pod to Pod to ${peer.name}`,
        run: async () => {
          // The peer Running and ready first: a Pod whose node just came back still shows its old sandbox's IP.
          await running(ctx, peer.name);
          const ip = (await podOf(ctx, peer.name)).status?.podIP;
          const got = await httpGet(ctx, h.name, ip ?? '', PORT);
          if (got !== probeName(peer.name))
            throw new Error(
              `GET http://${ip}:${PORT}/ from ${probeName(h.name)} answered "${got}", not ${probeName(peer.name)}`,
            );
          return `${probeName(peer.name)} at ${ip} answered`;
        },
      },
      {
        name: `probe Pod on ${h.name}: Service ${PROBE_SERVICE}.${PROBE_NS}.svc.${domain} by DNS`,
        run: async () => {
          const name = `${PROBE_SERVICE}.${PROBE_NS}.svc.${domain}`;
          // busybox's nslookup has its own resolver and reads the Pod's resolv.conf (the kubelet's clusterDNS).
          const ns = await kubectlExec(ctx, h.name, ['nslookup', name]);
          const ip = /Name:\s*\S+\s*\nAddress:\s*(\S+)/.exec(ns)?.[1];
          if (!ip)
            throw new Error(
              `nslookup ${name} in ${probeName(h.name)} found no address: ${ns.split('\n').slice(-3).join(' ')}`,
            );
          const got = await httpGet(ctx, h.name, ip, 80);
          if (!got.startsWith('probe-'))
            throw new Error(`GET http://${name}/ (${ip}) answered "${got}"`);
          return `${name} is ${ip}; it answered ${got}`;
        },
      },
    ];
  });
}

/** Waits for every check to pass, each retried until the gate timeout; a failure names its host and the Pod's events. */
export async function probeGate(ctx: GateContext, full: boolean): Promise<void> {
  const checks = full
    ? probeChecks(ctx)
    : ctx.inv.workerHosts.map((h) => ({
        name: `probe Pod on ${h.name}: Running`,
        run: () => running(ctx, h.name),
      }));
  const deadline = Date.now() + ctx.opts.gateTimeoutMs;
  for (const c of checks) {
    const host = ctx.inv.workerHosts.find((h) =>
      c.name.startsWith(`probe Pod on ${h.name}:`),
    )!.name;
    const detail = await retry(c.run, {
      timeoutMs: Math.max(1000, deadline - Date.now()),
      intervalMs: 1000,
      startBeforeDeadline: true,
      onTimeout: async (last) => {
        throw new StepError(
          'gate probes',
          `${c.name}: ${last instanceof Error ? last.message : String(last)}`,
          { host, detail: await events(ctx, host) },
        );
      },
    });
    ctx.log.info(`  ${c.name}: ${detail}`);
  }
}
