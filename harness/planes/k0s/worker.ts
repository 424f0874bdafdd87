// k0s with a worker (issue 23): on a lab of two worker lab hosts, a k0s controller with the worker
// cluster config (config.ts k0sWorkerClusterConfig), and a worker joined to it with a token from
// `k0s token create --role=worker`, from the same source-built k0s binary. Then the worker's Node
// Ready, kube-proxy and CoreDNS ready on it, a busybox Pod Running there, and what the worker runs
// read from /proc (worker-read.ts).
import { StepError } from '../../../lib/errors.ts';
import { abort, orAbort, retry } from '../../../lib/retry.ts';
import type { Logger } from '../../../lib/log.ts';
import type { Session } from '../../../core/transport/index.ts';
import type { EnsuredBinary } from '../../../core/components/binaries/index.ts';
import { IMAGES, KUBEADM_IMAGES } from '../../../core/components/images.ts';
import type { ClusterParams, PlaneData } from '../types.ts';
import {
  K0S_BIN,
  k0sWorkerClusterConfig,
  WORKER_CONTROLLER_DISABLED,
  WORKER_PROFILE,
} from './config.ts';
import { createToken, stageBinaries, startController, step } from './controller.ts';
import { COREDNS_NONROOT, K0S_IMAGE_DIR } from './images.ts';
import { prepareWorkerHost } from './worker-host.ts';
import { readWorkerProcs, readWorkerTree, WORKER_UNIT, type WorkerProcs } from './worker-read.ts';
import type { K0sWorker } from './worker-types.ts';
export type { K0sWorker } from './worker-types.ts';

export const WORKER_TOKEN = '/etc/k0s/worker.token';
export const WORKER_POD = 'busybox-k0s-worker';
/** The worker lab host's ext4 bind mount (lab/worker.ts): the kubelet's root, as on hardwire's workers. */
const KUBELET_ROOT = '/var/lib/kubelet';

export interface WorkerPair {
  controller: Session;
  worker: Session;
}

const kubectl = async (s: Session, args: string[], stdin?: string) => {
  const r = await orAbort(
    s.exec([K0S_BIN, 'kubectl', '--request-timeout=10s', ...args], {
      allowFail: true,
      timeoutMs: 30_000,
      ...(stdin ? { stdin } : {}),
    }),
  );
  return r.code === 0 ? r.stdout.trim() : '';
};

async function waitFor(
  s: Session,
  what: string,
  check: () => Promise<string | undefined>,
  timeoutMs: number,
): Promise<void> {
  let last = '';
  await retry(
    async () => {
      const bad = await check();
      if (bad !== undefined) {
        last = bad;
        throw new Error(bad);
      }
    },
    {
      timeoutMs,
      intervalMs: 1000,
      onTimeout: async () => {
        const journal = await s.exec(
          ['journalctl', '-u', WORKER_UNIT, '--no-pager', '-n', '12', '-o', 'cat'],
          { allowFail: true },
        );
        throw new StepError('compare-k0s', `${what} within ${timeoutMs / 1000} s: ${last}`, {
          host: s.host.name,
          detail: journal.stdout.split('\n'),
        });
      },
    },
  );
}

type Json = {
  spec?: { podCIDR?: string; nodeName?: string };
  status?: { phase?: string; podIP?: string; conditions?: { type: string; status: string }[] };
};
const get = async (c: Session, args: string[]) =>
  JSON.parse((await kubectl(c, [...args, '-o', 'json'])) || '{}') as Json;

/** The i-th /24 of the pod range, as kube-controller-manager allocates node ranges (--node-cidr-mask-size 24). */
export function firstNodeRange(podCIDR: string): string {
  const [a, b, c] = podCIDR.split('/')[0]!.split('.');
  return `${a}.${b}.${c}.0/24`;
}

/** Controller up, worker prepared beside it, joined, Ready, a Pod Running on it; then read. */
export async function runWorkerPair(
  plane: PlaneData,
  k0s: EnsuredBinary,
  parts: EnsuredBinary[],
  pair: WorkerPair,
  params: ClusterParams,
  log: Logger,
): Promise<{ worker: K0sWorker; procs: WorkerProcs }> {
  const { controller: c, worker: w } = pair;
  const refs = {
    pause: KUBEADM_IMAGES.pause.ref,
    kubeProxy: KUBEADM_IMAGES['kube-proxy'].ref,
    coredns: COREDNS_NONROOT.ref,
  };
  const podRange = firstNodeRange(params.podCIDR);
  await stageBinaries(c, k0s, parts, k0sWorkerClusterConfig(params, c.host.address, refs));
  log.info(`  k0s worker: controller ${c.host.name}, worker ${w.host.name}`);
  const disable = `--disable-components=${WORKER_CONTROLLER_DISABLED.join(',')}`;
  const [, prepared] = await Promise.all([
    startController(plane, c, false, 240_000, [disable]),
    prepareWorkerHost(plane, w, k0s, podRange, params.kubernetesVersion, log),
  ]);
  const token = await createToken(plane, c, 'worker');
  await w.writeFileAtomic(WORKER_TOKEN, token, { mode: 0o600 });
  const install = [
    K0S_BIN,
    'install',
    'worker',
    '--token-file',
    WORKER_TOKEN,
    `--profile=${WORKER_PROFILE}`,
    '--ignore-pre-flight-checks',
    `--kubelet-root-dir=${KUBELET_ROOT}`,
    `--kubelet-extra-args=--node-ip=${w.host.address}`,
  ];
  await step(plane, w, install, 'k0s install worker');
  // No masquerade on the Pod network: the controller reaches the worker's Pods (CoreDNS's replies to the apiserver) through it.
  await step(
    plane,
    c,
    ['ip', 'route', 'replace', podRange, 'via', w.host.address],
    `route ${podRange} via ${w.host.name}`,
  );
  const node = (await w.exec(['hostname'])).stdout.trim();
  const t0 = performance.now();
  await step(plane, w, ['systemctl', 'start', WORKER_UNIT], `systemctl start ${WORKER_UNIT}`);
  await waitFor(
    w,
    `Node ${node} was not Ready`,
    async () => {
      // k0s worker exits on a fatal error (a failed pre-flight check, say) and systemd starts it again: say why at once.
      const restarts = Number(
        (
          await orAbort(w.exec(['systemctl', 'show', '-p', 'NRestarts', '--value', WORKER_UNIT]))
        ).stdout.trim(),
      );
      if (restarts > 0) {
        const journal = await w.exec(
          ['journalctl', '-u', WORKER_UNIT, '--no-pager', '-n', '8', '-o', 'cat'],
          { allowFail: true },
        );
        throw abort(
          new StepError(
            'compare-k0s',
            `${WORKER_UNIT} exited and was restarted ${restarts} time(s) before Node ${node} was Ready`,
            { host: w.host.name, detail: journal.stdout.split('\n') },
          ),
        );
      }
      const n = await get(c, ['get', 'node', node]);
      if (n.spec?.podCIDR && n.spec.podCIDR !== podRange)
        throw abort(
          new StepError(
            'compare-k0s',
            `Node ${node} got Pod range ${n.spec.podCIDR}, not ${podRange} its CNI config has`,
            { host: w.host.name },
          ),
        );
      const ready = n.status?.conditions?.find((x) => x.type === 'Ready')?.status;
      return ready === 'True' ? undefined : `Ready is ${ready ?? 'absent'}`;
    },
    180_000,
  );
  const readyMs = Math.round(performance.now() - t0);
  plane.steps.push({
    step: `${w.host.name}: k0sworker start to Node ${node} Ready`,
    ms: readyMs,
    ok: true,
  });
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: WORKER_POD, namespace: 'default' },
    spec: {
      containers: [
        {
          name: 'busybox',
          image: IMAGES.busybox.ref,
          imagePullPolicy: 'Never',
          command: ['sleep', '3600'],
        },
      ],
    },
  };
  if (!(await kubectl(c, ['apply', '-f', '-'], JSON.stringify(pod))))
    throw new StepError('compare-k0s', `kubectl apply of Pod ${WORKER_POD} failed`, {
      host: c.host.name,
    });
  let where = { node: '', ip: '' };
  await waitFor(
    w,
    `Pod ${WORKER_POD} was not Running`,
    async () => {
      const p = await get(c, ['get', 'pod', WORKER_POD]);
      where = { node: p.spec?.nodeName ?? '', ip: p.status?.podIP ?? '' };
      return p.status?.phase === 'Running'
        ? undefined
        : `phase ${p.status?.phase ?? 'unknown'} on ${where.node || 'no node'}`;
    },
    120_000,
  );
  const podMs = Math.round(performance.now() - t0);
  plane.steps.push({
    step: `Pod ${WORKER_POD} Running on ${where.node}`,
    ms: podMs,
    ok: true,
    output: `${where.ip}`,
  });
  const addons = await waitAddons(c, w);
  plane.steps.push({
    step: 'kube-proxy and CoreDNS Running and ready on the worker',
    ms: Math.round(performance.now() - t0),
    ok: true,
    output: addons.map((a) => `${a.name} ${a.phase} ready=${a.ready} ${a.image}`).join('\n'),
  });
  const tree = await readWorkerTree(w);
  const procs = await readWorkerProcs(w, tree, w.host.name);
  const pulls = (
    await w.exec([
      'sh',
      '-c',
      `journalctl -u ${WORKER_UNIT} --no-pager -o cat | grep PullImage || true`,
    ])
  ).stdout
    .trim()
    .split('\n')
    .filter(Boolean);
  const images = (
    await w.exec([K0S_BIN, 'ctr', '-n', 'k8s.io', 'images', 'ls', '-q'], { allowFail: true })
  ).stdout
    .trim()
    .split('\n')
    .filter((l) => l && !l.startsWith('sha256:'));
  const worker: K0sWorker = {
    controller: {
      host: c.host.name,
      address: c.host.address,
      disabled: WORKER_CONTROLLER_DISABLED,
    },
    node,
    address: w.host.address,
    install,
    readyMs,
    podMs,
    podRange,
    pod: { name: WORKER_POD, ...where, image: IMAGES.busybox.ref },
    addons,
    tree,
    images,
    pulls,
  };
  plane.notes.push(
    `k0s worker ${node} (${prepared.binaries.length} binaries built here, ${prepared.images.length} images imported by k0s from ${K0S_IMAGE_DIR}): Node Ready ${(readyMs / 1000).toFixed(1)} s after systemctl start k0sworker, Pod ${WORKER_POD} Running after ${(podMs / 1000).toFixed(1)} s; ${pulls.length} PullImage lines in its containerd's log`,
  );
  return { worker, procs };
}

/** kube-proxy's and CoreDNS's Pods Running and ready (CoreDNS runs on the worker: it is the only node). */
async function waitAddons(c: Session, w: Session): Promise<K0sWorker['addons']> {
  type Pods = {
    items?: {
      metadata: { name: string };
      spec: { containers: { image: string }[] };
      status: { phase: string; containerStatuses?: { ready: boolean }[] };
    }[];
  };
  let pods: NonNullable<Pods['items']> = [];
  await waitFor(
    w,
    'kube-proxy and CoreDNS were not ready',
    async () => {
      pods =
        (
          JSON.parse(
            (await kubectl(c, [
              'get',
              'pods',
              '-n',
              'kube-system',
              '-l',
              'k8s-app in (kube-proxy,kube-dns)',
              '-o',
              'json',
            ])) || '{}',
          ) as Pods
        ).items ?? [];
      const ready = (p: (typeof pods)[number]) =>
        p.status.phase === 'Running' && (p.status.containerStatuses ?? []).every((x) => x.ready);
      const names = pods.map((p) => `${p.metadata.name} ${p.status.phase}`).join(', ');
      return pods.some((p) => p.metadata.name.startsWith('kube-proxy')) &&
        pods.some((p) => p.metadata.name.startsWith('coredns')) &&
        pods.every(ready)
        ? undefined
        : `Pods: ${names || 'none'}`;
    },
    180_000,
  );
  return pods.map((p) => ({
    name: p.metadata.name,
    phase: p.status.phase,
    ready: (p.status.containerStatuses ?? []).every((x) => x.ready),
    image: p.spec.containers[0]?.image ?? '',
  }));
}
