// After `kubeadm init`: kubeadm's two addons running (the kube-proxy DaemonSet, the CoreDNS
// Deployment), then a busybox Pod from the image built here Running on the node and resolving the
// kubernetes Service through CoreDNS, the Service's ClusterIP reached through kube-proxy's rules.
// All through kubectl with admin.conf on the host.
import { StepError } from '../../lib/errors.ts';
import { orAbort, retry } from '../../lib/retry.ts';
import { IMAGES } from '../../core/components/images.ts';
import type { Session } from '../../core/transport/index.ts';
import type { KubeadmRun, PlaneData } from './types.ts';

const ADMIN = '/etc/kubernetes/admin.conf';
export const FIRST_POD = 'busybox';

async function kubectl(
  s: Session,
  args: string[],
  stdin?: string,
): Promise<{ code: number; out: string }> {
  const r = await orAbort(
    s.exec(['kubectl', '--kubeconfig', ADMIN, '--request-timeout=10s', ...args], {
      allowFail: true,
      timeoutMs: 30_000,
      ...(stdin ? { stdin } : {}),
    }),
  );
  return { code: r.code, out: r.code === 0 ? r.stdout.trim() : `${r.stdout}${r.stderr}`.trim() };
}

/** Waits for `ready` to hold; on timeout the error carries `why`'s lines (a Pod's log, its events). */
async function until(
  s: Session,
  what: string,
  ready: () => Promise<string | undefined>,
  why: () => Promise<string>,
  timeoutMs = 240_000,
): Promise<void> {
  let last = '';
  await retry(
    async () => {
      const bad = await ready();
      if (bad !== undefined) {
        last = bad;
        throw new Error(bad);
      }
    },
    {
      timeoutMs,
      intervalMs: 2000,
      onTimeout: async () => {
        const detail = (await why()).split('\n').filter((l) => l.trim());
        // The last line of a log is most often the error that ended it: in the message, so a test's failure names it.
        throw new StepError(
          'compare-kubeadm',
          `${what} within ${timeoutMs / 1000} s: ${last}${detail.length ? `; last: ${detail.at(-1)!.trim()}` : ''}`,
          { host: s.host.name, detail: detail.slice(-15) },
        );
      },
    },
  );
}

const logsOf = (s: Session, sel: string) => async () =>
  (await kubectl(s, ['logs', '-n', 'kube-system', '-l', sel, '--tail=10', '--all-containers'])).out;

/**
 * kube-proxy's DaemonSet has no readiness probe, so "ready" is only a container that started: one that
 * exits at once (a conntrack sysctl it cannot write, no nft in its image) is counted ready between its
 * restarts. What shows it works is what it wrote: the kubernetes Service's element in its nftables
 * service-ips map (the mode kubeadm.yaml sets), read with the host's own nft. Undefined once it is there.
 */
async function kubeProxyRules(s: Session): Promise<string | undefined> {
  const map = await orAbort(
    s.exec(['nft', 'list', 'map', 'ip', 'kube-proxy', 'service-ips'], {
      allowFail: true,
      timeoutMs: 30_000,
    }),
  );
  if (map.code === 0 && map.stdout.includes('default/kubernetes/tcp/https')) return undefined;
  const pods = JSON.parse(
    (
      await kubectl(s, [
        'get',
        'pods',
        '-n',
        'kube-system',
        '-l',
        'k8s-app=kube-proxy',
        '-o',
        'json',
      ])
    ).out || '{}',
  ) as {
    items?: {
      metadata: { name: string };
      status: {
        containerStatuses?: { restartCount: number; state?: { waiting?: { reason?: string } } }[];
      };
    }[];
  };
  const state = (pods.items ?? []).map((p) => {
    const c = p.status.containerStatuses?.[0];
    return `${p.metadata.name} restarts ${c?.restartCount ?? 0}${c?.state?.waiting?.reason ? ` (${c.state.waiting.reason})` : ''}`;
  });
  return `no element for the kubernetes Service in nft map ip kube-proxy service-ips on ${s.host.name} (${state.join(', ') || 'no kube-proxy Pod'})`;
}

/** The kube-proxy and CoreDNS Pods' state once both addons are ready, kube-proxy's rules written. */
export async function waitAddons(
  plane: PlaneData,
  s: Session,
): Promise<NonNullable<KubeadmRun['addons']>> {
  const t0 = performance.now();
  const status = async (kind: string, name: string) =>
    JSON.parse(
      (await kubectl(s, ['get', kind, name, '-n', 'kube-system', '-o', 'json'])).out || '{}',
    ) as {
      status?: {
        desiredNumberScheduled?: number;
        numberReady?: number;
        replicas?: number;
        readyReplicas?: number;
      };
    };
  await until(
    s,
    'kube-proxy was not ready',
    async () => {
      const st = (await status('ds', 'kube-proxy')).status;
      if (!st?.desiredNumberScheduled || st.numberReady !== st.desiredNumberScheduled)
        return `kube-proxy DaemonSet ${st?.numberReady ?? 0}/${st?.desiredNumberScheduled ?? 0} ready`;
      return kubeProxyRules(s);
    },
    logsOf(s, 'k8s-app=kube-proxy'),
  ); // in CrashLoopBackOff, the log of the container that exited last
  await until(
    s,
    'CoreDNS was not ready',
    async () => {
      const st = (await status('deploy', 'coredns')).status;
      return st?.replicas && st.readyReplicas === st.replicas
        ? undefined
        : `CoreDNS Deployment ${st?.readyReplicas ?? 0}/${st?.replicas ?? 0} ready`;
    },
    logsOf(s, 'k8s-app=kube-dns'),
  );
  const pods = JSON.parse(
    (
      await kubectl(s, [
        'get',
        'pods',
        '-n',
        'kube-system',
        '-l',
        'k8s-app in (kube-proxy,kube-dns)',
        '-o',
        'json',
      ])
    ).out,
  ) as {
    items: {
      metadata: { name: string };
      status: { phase: string; containerStatuses?: { ready: boolean; restartCount: number }[] };
    }[];
  };
  const addons = pods.items.map((p) => ({
    name: p.metadata.name,
    phase: p.status.phase,
    ready: p.status.containerStatuses?.[0]?.ready ?? false,
    restarts: p.status.containerStatuses?.[0]?.restartCount ?? 0,
  }));
  plane.steps.push({
    step: 'kube-proxy DaemonSet and CoreDNS Deployment ready',
    ms: Math.round(performance.now() - t0),
    ok: true,
    output: addons
      .map((a) => `${a.name} ${a.phase} ready=${a.ready} restarts=${a.restarts}`)
      .join('\n'),
  });
  return addons;
}

/**
 * The Pod on the control-plane node: it tolerates the control-plane taint and is placed there by the
 * scheduler through the node's hostname label (the worker has joined by now, kubeadm.ts); its image is never pulled.
 */
export function firstPodManifest(node: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: FIRST_POD, namespace: 'default' },
    spec: {
      nodeSelector: { 'kubernetes.io/hostname': node },
      tolerations: [
        { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
      ],
      containers: [
        {
          name: 'busybox',
          image: IMAGES.busybox.ref,
          imagePullPolicy: 'Never',
          command: ['sleep', '3600'],
        },
      ],
    },
  });
}

/** Creates the busybox Pod, waits for it Running, and resolves kubernetes.default from inside it; `bare` is when the lab was bare. */
export async function firstPod(
  plane: PlaneData,
  s: Session,
  dnsDomain: string,
  bare: number,
): Promise<NonNullable<KubeadmRun['firstPod']> & { sinceLabMs: number }> {
  const t0 = performance.now();
  const created = await kubectl(s, ['apply', '-f', '-'], firstPodManifest(s.host.name));
  if (created.code !== 0)
    throw new StepError('compare-kubeadm', `kubectl apply of the busybox Pod: ${created.out}`, {
      host: s.host.name,
    });
  let pod = { node: '', ip: '' };
  await until(
    s,
    `Pod ${FIRST_POD} was not Running`,
    async () => {
      const p = JSON.parse(
        (await kubectl(s, ['get', 'pod', FIRST_POD, '-o', 'json'])).out || '{}',
      ) as { spec?: { nodeName?: string }; status?: { phase?: string; podIP?: string } };
      pod = { node: p.spec?.nodeName ?? '', ip: p.status?.podIP ?? '' };
      return p.status?.phase === 'Running' ? undefined : `phase ${p.status?.phase ?? 'unknown'}`;
    },
    async () =>
      (await kubectl(s, ['get', 'events', '--field-selector', `involvedObject.name=${FIRST_POD}`]))
        .out,
    120_000,
  );
  const runningMs = Math.round(performance.now() - t0);
  const sinceLabMs = Math.round(performance.now() - bare);
  // busybox's nslookup reads the Pod's resolv.conf (the kubelet's clusterDNS, CoreDNS's Service).
  const name = `kubernetes.default.svc.${dnsDomain}`;
  let answer = '';
  await until(
    s,
    `${name} did not resolve in Pod ${FIRST_POD}`,
    async () => {
      const r = await kubectl(s, ['exec', FIRST_POD, '--', 'nslookup', name]);
      answer = /Name:\s*\S+\s*\nAddress:\s*(\S+)/.exec(r.out)?.[1] ?? '';
      return answer ? undefined : r.out.split('\n').slice(-2).join(' ');
    },
    async () => (await kubectl(s, ['exec', FIRST_POD, '--', 'cat', '/etc/resolv.conf'])).out,
    60_000,
  );
  plane.steps.push({
    step: `busybox Pod Running on ${pod.node}; nslookup ${name} in it`,
    ms: Math.round(performance.now() - t0),
    ok: true,
    output: `${FIRST_POD} ${pod.ip} on ${pod.node}: ${name} is ${answer}`,
  });
  return {
    name: FIRST_POD,
    node: pod.node,
    ip: pod.ip,
    runningMs,
    sinceLabMs,
    dns: { name, address: answer },
  };
}
