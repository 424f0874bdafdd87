// `kubeadm join` of a worker, as kubeadm's docs have it: a token from `kubeadm token create
// --print-join-command` on the control plane, then on the worker (prepared like the first node, beside
// its init: containerd, the kubelet, the images) `kubeadm join --config` with that endpoint, token and CA hash.
// Then the Node Ready, routes between the nodes' Pod ranges (Hightower's static routes, as
// hardwire's own workers add them: there is no CNI network plugin here), and a Pod the scheduler
// places on the worker (the control-plane node is tainted) Running.
import { stringify } from 'yaml';
import { StepError } from '../../lib/errors.ts';
import { orAbort, retry } from '../../lib/retry.ts';
import type { Logger } from '../../lib/log.ts';
import type { Session } from '../../core/transport/index.ts';
import { IMAGES } from '../../core/components/images.ts';
import { bridgeConflist, CNI_CONFLIST } from '../../core/components/models/containerd.ts';
import { APISERVER_PORT } from '../../lib/constants.ts';
import type { KubeadmRun, PlaneData } from './types.ts';
import { nodeRegistration } from './kubeadm-init.ts';

const ADMIN = '/etc/kubernetes/admin.conf';
export const JOIN_CONFIG = '/root/hardwire-compare/kubeadm-join.yaml';
export const WORKER_POD = 'busybox-worker';

/** The endpoint, token and CA hash in `kubeadm token create --print-join-command`'s one line. */
export function parseJoinCommand(line: string): {
  endpoint: string;
  token: string;
  caCertHash: string;
} {
  const m =
    /kubeadm join (\S+) --token (\S+)\s+--discovery-token-ca-cert-hash (sha256:[0-9a-f]{64})/.exec(
      line,
    );
  if (!m)
    throw new Error(
      `not a kubeadm join command: ${line.replace(/--token \S+/, '--token <token>')}`,
    );
  return { endpoint: m[1]!, token: m[2]!, caCertHash: m[3]! };
}

/**
 * The JoinConfiguration: discovery by bootstrap token, and the same nodeRegistration as init's. With
 * `certificateKey`, a control-plane member's: its own API endpoint, and the key that decrypts the
 * certificates `kubeadm init phase upload-certs` put in the kubeadm-certs Secret.
 */
export function joinConfig(
  join: ReturnType<typeof parseJoinCommand>,
  name: string,
  address: string,
  certificateKey?: string,
): string {
  return stringify({
    apiVersion: 'kubeadm.k8s.io/v1beta4',
    kind: 'JoinConfiguration',
    discovery: {
      bootstrapToken: {
        apiServerEndpoint: join.endpoint,
        token: join.token,
        caCertHashes: [join.caCertHash],
      },
    },
    nodeRegistration: nodeRegistration(name, address),
    ...(certificateKey
      ? {
          controlPlane: {
            localAPIEndpoint: { advertiseAddress: address, bindPort: APISERVER_PORT },
            certificateKey,
          },
        }
      : {}),
  });
}

/** Runs one step of a join on a host; `secret` (a certificate key) is cut from what the report keeps, as the token is. */
export async function step(
  plane: PlaneData,
  s: Session,
  argv: string[],
  what: string,
  timeoutMs = 300_000,
  secret?: string,
): Promise<string> {
  const t0 = performance.now();
  const r = await s.exec(argv, { allowFail: true, timeoutMs });
  const out = `${r.stdout}${r.stderr}`.trim();
  // The join token is a credential: it never reaches the report.
  const redacted = out
    .replace(/--token \S+/g, '--token <token>')
    .replace(/token: \S+/g, 'token: <token>');
  const shown = secret ? redacted.replaceAll(secret, '<certificate-key>') : redacted;
  plane.steps.push({
    step: what,
    argv,
    ms: Math.round(performance.now() - t0),
    ok: r.code === 0,
    output: shown.split('\n').slice(-6).join('\n'),
  });
  if (r.code !== 0)
    throw new StepError('compare-kubeadm', `${what}: exited ${r.code}`, {
      host: s.host.name,
      detail: shown.split('\n').slice(-20),
    });
  return r.stdout;
}

export async function waitFor(
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
      intervalMs: 2000,
      onTimeout: () => {
        throw new StepError('compare-kubeadm', `${what} within ${timeoutMs / 1000} s: ${last}`, {
          host: s.host.name,
        });
      },
    },
  );
}

export const kubectl = async (s: Session, args: string[], stdin?: string) => {
  const r = await orAbort(
    s.exec(['kubectl', '--kubeconfig', ADMIN, '--request-timeout=10s', ...args], {
      allowFail: true,
      timeoutMs: 30_000,
      ...(stdin ? { stdin } : {}),
    }),
  );
  return r.code === 0 ? r.stdout.trim() : '';
};

export interface JoinHost {
  s: Session;
  name: string;
  address: string;
}

export const podCIDROf = async (cp: JoinHost, node: string) =>
  kubectl(cp.s, ['get', 'node', node, '-o', 'jsonpath={.spec.podCIDR}']);

/**
 * As a network plugin would: waits for the joined Node's spec.podCIDR (which /24 kube-controller-manager
 * gives a joined node is not fixed) and writes it into the node's bridge config. Returns the range.
 */
export async function adoptPodRange(cp: JoinHost, node: JoinHost): Promise<string> {
  let range = '';
  await waitFor(
    cp.s,
    `Node ${node.name} got no spec.podCIDR`,
    async () => {
      range = await podCIDROf(cp, node.name);
      return range ? undefined : 'spec.podCIDR empty';
    },
    120_000,
  );
  await node.s.writeFileAtomic(CNI_CONFLIST, bridgeConflist('kubeadm-pods', range), {
    mode: 0o644,
  });
  return range;
}

/**
 * Joins `worker` to the cluster `cp` runs; `cpRange` is the Pod range of cp's bridge. The worker's
 * range is its Node's spec.podCIDR, read after the join and only then written into its CNI config:
 * with the join right after init, which /24 kube-controller-manager gives it is not fixed (a run
 * saw 10.244.2.0/24 where the second range was assumed).
 */
export async function joinWorker(
  plane: PlaneData,
  cp: JoinHost,
  worker: JoinHost,
  cpRange: string,
  prepared: Promise<void>,
  log: Logger,
): Promise<NonNullable<KubeadmRun['worker']>> {
  // `prepared`: the worker's host preparation (prepareKubeadmNode), started beside node1's init (kubeadm.ts).
  const tWait = performance.now();
  await prepared;
  const waitedMs = Math.round(performance.now() - tWait);
  const t0 = performance.now();
  log.info(
    `  ${worker.name}: kubeadm join (its preparation ran beside node1's init; ${(waitedMs / 1000).toFixed(1)} s of it outlasted init)`,
  );
  const join = parseJoinCommand(
    (
      await step(
        plane,
        cp.s,
        ['kubeadm', 'token', 'create', '--print-join-command'],
        'kubeadm token create --print-join-command',
      )
    ).trim(),
  );
  await worker.s.exec(['mkdir', '-p', '/root/hardwire-compare']);
  await worker.s.writeFileAtomic(JOIN_CONFIG, joinConfig(join, worker.name, worker.address), {
    mode: 0o600,
  });
  const tJoin = performance.now();
  await step(
    plane,
    worker.s,
    ['kubeadm', 'join', '--config', JOIN_CONFIG],
    `kubeadm join on ${worker.name}`,
  );
  const joinMs = Math.round(performance.now() - tJoin);
  // The bridge's range from the Node object, then routes both ways (each node reaches the other's
  // Pods through it; replies come back the same way).
  const range = await adoptPodRange(cp, worker);
  await step(
    plane,
    cp.s,
    ['ip', 'route', 'replace', range, 'via', worker.address],
    `route ${range} via ${worker.name}`,
  );
  await step(
    plane,
    worker.s,
    ['ip', 'route', 'replace', cpRange, 'via', cp.address],
    `route ${cpRange} via ${cp.name}`,
  );
  await waitFor(
    cp.s,
    `Node ${worker.name} was not Ready`,
    async () => {
      const ready = await kubectl(cp.s, [
        'get',
        'node',
        worker.name,
        '-o',
        'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
      ]);
      return ready === 'True' ? undefined : `Ready is ${ready || 'absent'}`;
    },
    180_000,
  );
  const readyMs = Math.round(performance.now() - t0);
  // No toleration: the control-plane node is tainted, so the scheduler has one place for it.
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
  if (!(await kubectl(cp.s, ['apply', '-f', '-'], JSON.stringify(pod))))
    throw new StepError('compare-kubeadm', `kubectl apply of Pod ${WORKER_POD} failed`, {
      host: cp.name,
    });
  let where = { node: '', ip: '' };
  await waitFor(
    cp.s,
    `Pod ${WORKER_POD} was not Running`,
    async () => {
      const p = JSON.parse(
        (await kubectl(cp.s, ['get', 'pod', WORKER_POD, '-o', 'json'])) || '{}',
      ) as { spec?: { nodeName?: string }; status?: { phase?: string; podIP?: string } };
      where = { node: p.spec?.nodeName ?? '', ip: p.status?.podIP ?? '' };
      return p.status?.phase === 'Running'
        ? undefined
        : `phase ${p.status?.phase ?? 'unknown'} on ${where.node || 'no node'}`;
    },
    120_000,
  );
  plane.steps.push({
    step: `Pod ${WORKER_POD} Running on ${where.node}`,
    ms: Math.round(performance.now() - t0),
    ok: true,
    output: `${WORKER_POD} ${where.ip} on ${where.node}`,
  });
  plane.notes.push(
    `kubeadm join took ${(joinMs / 1000).toFixed(1)} s on ${worker.name}; Node Ready ${(readyMs / 1000).toFixed(1)} s after the join began (its preparation ran beside node1's init, ${(waitedMs / 1000).toFixed(1)} s of it after init); Pod ${WORKER_POD} Running on ${where.node}`,
  );
  return { node: worker.name, joinMs, readyMs, pod: { name: WORKER_POD, ...where } };
}
