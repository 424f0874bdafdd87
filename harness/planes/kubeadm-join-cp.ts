// `kubeadm join --control-plane` of a second control-plane member, the way kubeadm's HA guide has it
// (https://kubernetes.io/docs/setup/production-environment/tools/kubeadm/high-availability/):
// init set a controlPlaneEndpoint; `kubeadm init phase upload-certs --upload-certs` on the first
// node encrypts the shared certificates (CAs, sa key, front-proxy CA, etcd CA) into the kubeadm-certs
// Secret with a certificate key; the joining node's JoinConfiguration carries that key under
// controlPlane. The key is made here (kubeadm's is 32 random bytes, hex: copycerts.CreateCertificateKey),
// goes only into 0600 files, never into an argv, and is cut from every output the report keeps.
// The node's Pod range is the spec.podCIDR kube-controller-manager gives it, read once it is set and
// only then written into its CNI config: which /24 a third node gets is not fixed.
import { randomBytes } from 'node:crypto';
import { parseAllDocuments } from 'yaml';
import { StepError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import type { KubeadmRun, PlaneData } from './types.ts';
import { INIT_CONFIG } from './kubeadm-init.ts';
import {
  adoptPodRange,
  JOIN_CONFIG,
  joinConfig,
  kubectl,
  parseJoinCommand,
  podCIDROf,
  step,
  waitFor,
  type JoinHost,
} from './kubeadm-join.ts';
import { prepareKubeadmNode } from './kubeadm-node.ts';

/** init's kubeadm.yaml plus the certificate key, for `kubeadm init phase upload-certs` on the first node; removed after. */
export const UPLOAD_CONFIG = '/root/hardwire-compare/kubeadm-upload-certs.yaml';

/** kubeadm.yaml (every document kept) with InitConfiguration.certificateKey set. */
export function withCertificateKey(initConfig: string, key: string): string {
  const docs = parseAllDocuments(initConfig);
  const init = docs.find((d) => d.get('kind') === 'InitConfiguration');
  if (!init)
    throw new StepError('compare-kubeadm', 'kubeadm.yaml has no InitConfiguration document');
  init.set('certificateKey', key);
  return docs.map((d) => d.toString()).join('');
}

/**
 * Joins `joiner` as a second control-plane member of the cluster `cp` runs; `peers` are the
 * cluster's other nodes (cp included), routed to and from the joiner's Pod range.
 */
export async function joinControlPlane(
  plane: PlaneData,
  cp: JoinHost,
  joiner: JoinHost,
  peers: JoinHost[],
  version: string,
  log: Logger,
): Promise<NonNullable<KubeadmRun['controlPlane']>> {
  const t0 = performance.now();
  log.info(
    `  ${joiner.name}: containerd, kubelet and the control plane's images, then kubeadm join --control-plane`,
  );
  await prepareKubeadmNode(plane, joiner.s, version, undefined, log, 'control-plane');
  const key = randomBytes(32).toString('hex');
  const initConfig = (await cp.s.readFile(INIT_CONFIG)).toString('utf8');
  await cp.s.writeFileAtomic(UPLOAD_CONFIG, withCertificateKey(initConfig, key), { mode: 0o600 });
  try {
    await step(
      plane,
      cp.s,
      [
        'kubeadm',
        'init',
        'phase',
        'upload-certs',
        '--upload-certs',
        '--skip-certificate-key-print',
        '--config',
        UPLOAD_CONFIG,
      ],
      'kubeadm init phase upload-certs --upload-certs',
      120_000,
      key,
    );
  } finally {
    await cp.s.exec(['rm', '-f', UPLOAD_CONFIG]);
  }
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
  await joiner.s.exec(['mkdir', '-p', '/root/hardwire-compare']);
  await joiner.s.writeFileAtomic(JOIN_CONFIG, joinConfig(join, joiner.name, joiner.address, key), {
    mode: 0o600,
  });
  const tJoin = performance.now();
  await step(
    plane,
    joiner.s,
    ['kubeadm', 'join', '--config', JOIN_CONFIG],
    `kubeadm join --control-plane on ${joiner.name}`,
    600_000,
    key,
  );
  const joinMs = Math.round(performance.now() - tJoin);
  // The bridge's range from the Node object, then routes both ways.
  const podCIDR = await adoptPodRange(cp, joiner);
  for (const p of peers) {
    const range = await podCIDROf(cp, p.name);
    if (range)
      await step(
        plane,
        joiner.s,
        ['ip', 'route', 'replace', range, 'via', p.address],
        `route ${range} via ${p.name}`,
      );
    await step(
      plane,
      p.s,
      ['ip', 'route', 'replace', podCIDR, 'via', joiner.address],
      `route ${podCIDR} via ${joiner.name}`,
    );
  }
  await waitFor(
    cp.s,
    `Node ${joiner.name} was not Ready`,
    async () => {
      const ready = await kubectl(cp.s, [
        'get',
        'node',
        joiner.name,
        '-o',
        'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
      ]);
      return ready === 'True' ? undefined : `Ready is ${ready || 'absent'}`;
    },
    180_000,
  );
  // Its kube-proxy (kubeadm's DaemonSet) ready too, as on the other nodes before anything is read.
  await waitFor(
    cp.s,
    `kube-proxy on ${joiner.name} was not ready`,
    async () => {
      const ready = await kubectl(cp.s, [
        'get',
        'pods',
        '-n',
        'kube-system',
        '-l',
        'k8s-app=kube-proxy',
        '--field-selector',
        `spec.nodeName=${joiner.name}`,
        '-o',
        'jsonpath={.items[*].status.containerStatuses[*].ready}',
      ]);
      return ready === 'true' ? undefined : `ready: ${ready || 'no Pod yet'}`;
    },
    120_000,
  );
  const readyMs = Math.round(performance.now() - t0);
  plane.notes.push(
    `kubeadm join --control-plane took ${(joinMs / 1000).toFixed(1)} s on ${joiner.name} (certificates uploaded with a key kept in 0600 files only); Node Ready with Pod range ${podCIDR}, its kube-proxy ready, ${(readyMs / 1000).toFixed(1)} s after its preparation began`,
  );
  return { node: joiner.name, joinMs, readyMs, podCIDR };
}
