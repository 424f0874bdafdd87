// The kubeadm plane's host, made ready for a full `kubeadm init`: a worker lab host (lab/worker.ts:
// its own cgroups, /dev/kmsg, shared /) with containerd, runc, the CNI plugins and the kubelet
// installed the way kubeadm's install guide has them, crictl with /etc/crictl.yaml, and kubeadm's images, built here under the
// names kubeadm expects (components/images.ts KUBEADM_IMAGES), imported into containerd. Nothing is
// pulled: the lab has no route to a registry, and every image kubeadm lists is already present.
import { statSync } from 'node:fs';
import { ensureAll } from '../../core/components/binaries/index.ts';
import { ensureImages } from '../../core/components/image-build.ts';
import { IMAGES, KUBEADM_IMAGES, type ImageSpec } from '../../core/components/images.ts';
import { nftClosure, withNft } from './kube-proxy-image.ts';
import { crictlConfig, CRICTL_CONFIG_PATH } from './crictl.ts';
import {
  bridgeConflist,
  containerdConfig,
  CNI_CONF_DIR,
  CNI_CONFLIST,
  CONTAINERD_CONFIG,
} from '../../core/components/models/containerd.ts';
import { NODE_PREPARE_UNIT } from '../lab/index.ts';
import { StepError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import type { Session } from '../../core/transport/index.ts';
import type { BatchFile } from '../../core/transport/batch.ts';
import type { PlaneData } from './types.ts';

/** Where the packages put them: the kubelet and kubeadm .debs in /usr/bin (the drop-in runs /usr/bin/kubelet). */
const PLACES = {
  kubelet: '/usr/bin/kubelet',
  kubeadm: '/usr/bin/kubeadm',
  kubectl: '/usr/bin/kubectl',
  // containerd's getting-started guide: the release tarball into /usr/local; runc beside it, where
  // containerdConfig's BinaryName points (the guide has /usr/local/sbin).
  containerd: '/usr/local/bin/containerd',
  'containerd-shim-runc-v2': '/usr/local/bin/containerd-shim-runc-v2',
  ctr: '/usr/local/bin/ctr',
  runc: '/usr/local/bin/runc',
  // crictl where its release tarball goes in kubeadm's install guide ("tar zxvf crictl-… -C /usr/local/bin").
  crictl: '/usr/local/bin/crictl',
  // The CNI plugins where containerd's guide and kubeadm's docs put them (containerd's default bin_dirs).
  bridge: '/opt/cni/bin/bridge',
  'host-local': '/opt/cni/bin/host-local',
  loopback: '/opt/cni/bin/loopback',
  portmap: '/opt/cni/bin/portmap',
} as const;
const IMAGE_DIR = '/var/lib/hardwire/kubeadm-images';
export const SANDBOX = KUBEADM_IMAGES.pause.ref;

/**
 * containerd's own unit (containerd.service at the root of github.com/containerd/containerd/v2@v2.3.3),
 * ordered after this node's preparation, and without its OOMScoreAdjust=-999: the lab machine's
 * bounding set lacks CAP_SYS_RESOURCE, so no process here may lower its OOM score (workers spike, error 5).
 */
export const CONTAINERD_UNIT = `[Unit]
Description=containerd container runtime
Documentation=https://containerd.io
Requires=${NODE_PREPARE_UNIT}
After=network.target dbus.service ${NODE_PREPARE_UNIT}

[Service]
ExecStart=/usr/local/bin/containerd
Type=notify
Delegate=yes
KillMode=process
Restart=always
RestartSec=5
LimitNPROC=infinity
LimitCORE=infinity
TasksMax=infinity

[Install]
WantedBy=multi-user.target
`;

/**
 * The kubelet unit and kubeadm's drop-in, as the kubelet and kubeadm packages install them:
 * kubernetes/release cmd/krel/templates/latest/kubelet/kubelet.service and
 * …/kubeadm/10-kubeadm.conf, shown in kubeadm's docs
 * (https://kubernetes.io/docs/setup/production-environment/tools/kubeadm/kubelet-integration/#the-kubelet-drop-in-file-for-systemd).
 * Until `kubeadm init` writes /var/lib/kubelet/config.yaml the kubelet exits and restarts every 10 s, as documented.
 */
export const KUBELET_UNIT = `[Unit]
Description=kubelet: The Kubernetes Node Agent
Documentation=https://kubernetes.io/docs/
Wants=network-online.target
After=network-online.target

[Service]
ExecStart=/usr/bin/kubelet
Restart=always
StartLimitInterval=0
RestartSec=10

[Install]
WantedBy=multi-user.target
`;
export const KUBEADM_DROPIN = `# Note: This dropin only works with kubeadm and kubelet v1.11+
[Service]
Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf"
Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"
# This is a file that "kubeadm init" and "kubeadm join" generates at runtime, populating the KUBELET_KUBEADM_ARGS variable dynamically
EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env
# This is a file that the user can use for overrides of the kubelet args as a last resort. Preferably, the user should use
# the .NodeRegistration.KubeletExtraArgs object in the configuration files instead. KUBELET_EXTRA_ARGS should be sourced from this file.
EnvironmentFile=-/etc/default/kubelet
ExecStart=
ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
`;
export const KUBELET_UNIT_PATH = '/usr/lib/systemd/system/kubelet.service';
export const KUBEADM_DROPIN_PATH = '/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf';

async function sh(
  plane: PlaneData,
  s: Session,
  argv: string[],
  step: string,
  timeoutMs = 120_000,
): Promise<string> {
  const t0 = performance.now();
  const r = await s.exec(argv, { allowFail: true, timeoutMs });
  const out = `${r.stdout}${r.stderr}`.trim();
  plane.steps.push({
    step,
    argv,
    ms: Math.round(performance.now() - t0),
    ok: r.code === 0,
    output: out.split('\n').slice(-6).join('\n'),
  });
  if (r.code !== 0)
    throw new StepError('compare-kubeadm', `${argv.join(' ')} exited ${r.code}`, {
      host: s.host.name,
      detail: out.split('\n').slice(-15),
    });
  return r.stdout;
}

/**
 * Installs and starts containerd and the kubelet (enabled, waiting for kubeadm), imports kubeadm's
 * images. `podRange` is this node's Pod range; undefined leaves the CNI config to be written once
 * the Node has its spec.podCIDR (kubeadm-join-cp.ts). Returns the image refs imported. A worker gets only the
 * images it runs (kube-proxy, pause; CoreDNS should a replica move there): the control plane's four stay off it.
 */
export async function prepareKubeadmNode(
  plane: PlaneData,
  s: Session,
  version: string,
  podRange: string | undefined,
  log: Logger,
  role: 'control-plane' | 'worker' = 'control-plane',
): Promise<string[]> {
  let t0 = performance.now();
  const bins = await ensureAll(Object.keys(PLACES) as (keyof typeof PLACES)[], {
    kubernetesVersion: version,
    log,
  });
  const all = {
    ...KUBEADM_IMAGES,
    'kube-proxy': withNft(KUBEADM_IMAGES['kube-proxy'], await nftClosure(log)),
  };
  const table =
    role === 'worker'
      ? { 'kube-proxy': all['kube-proxy'], pause: all.pause, coredns: all.coredns }
      : all;
  // kubeadm's images, and the busybox a first Pod runs (hardwire's own workers run the same one).
  const images = [
    ...(await ensureImages(log, undefined, table as Record<string, ImageSpec<string>>)),
    ...(await ensureImages(log, undefined, { busybox: IMAGES.busybox } as Record<
      string,
      ImageSpec<string>
    >)),
  ];
  plane.steps.push({
    step: `kubeadm's ${images.length - 1} images and busybox built here (or cached)`,
    ms: Math.round(performance.now() - t0),
    ok: true,
    output: images.map((i) => i.ref).join('\n'),
  });
  t0 = performance.now();
  const file = (path: string, data: string, mode = 0o644): BatchFile => ({
    path,
    mode,
    data: Buffer.from(data),
  });
  await s.writeFilesAtomic([
    ...bins.map((b) => ({
      path: PLACES[b.name as keyof typeof PLACES],
      mode: 0o755,
      data: { file: b.path, size: statSync(b.path).size },
    })),
    ...images.map((i) => ({
      path: `${IMAGE_DIR}/${i.name}.tar`,
      mode: 0o644,
      data: { file: i.path, size: statSync(i.path).size },
    })),
    file(CONTAINERD_CONFIG, containerdConfig({ sandbox: SANDBOX, cniBinDir: '/opt/cni/bin' })),
    ...(podRange ? [file(CNI_CONFLIST, bridgeConflist('kubeadm-pods', podRange))] : []),
    file(CRICTL_CONFIG_PATH, crictlConfig()),
    file('/etc/systemd/system/containerd.service', CONTAINERD_UNIT),
    file(KUBELET_UNIT_PATH, KUBELET_UNIT),
    file(KUBEADM_DROPIN_PATH, KUBEADM_DROPIN),
  ]);
  plane.steps.push({
    step: `stage ${bins.length} binaries, ${images.length} image tarballs, containerd and kubelet units`,
    ms: Math.round(performance.now() - t0),
    ok: true,
  });
  // kubeadm's install guide ("Enable IPv4 packet forwarding"); preflight fails without it. The node has its own
  // network namespace, so this changes nothing on the machine or the other lab hosts.
  await sh(
    plane,
    s,
    [
      'sh',
      '-c',
      'echo net.ipv4.ip_forward = 1 > /etc/sysctl.d/k8s.conf && echo 1 > /proc/sys/net/ipv4/ip_forward',
    ],
    'net.ipv4.ip_forward = 1',
  );
  // containerd watches the CNI directory for the config a Node's range goes into later: it must exist first.
  if (!podRange)
    await sh(
      plane,
      s,
      ['mkdir', '-p', CNI_CONF_DIR],
      `mkdir ${CNI_CONF_DIR} (its config comes with the Node's Pod range)`,
    );
  await sh(plane, s, ['systemctl', 'daemon-reload'], 'systemctl daemon-reload');
  await sh(plane, s, ['systemctl', 'enable', '--now', 'containerd'], 'start containerd');
  for (const i of images)
    await sh(
      plane,
      s,
      ['ctr', '-n', 'k8s.io', 'images', 'import', `${IMAGE_DIR}/${i.name}.tar`],
      `import ${i.ref}`,
    );
  // Enabled as the package leaves it (kubeadm's preflight warns otherwise); it restarts until kubeadm configures it.
  await sh(
    plane,
    s,
    ['systemctl', 'enable', '--now', 'kubelet'],
    'enable the kubelet (waits for kubeadm)',
  );
  return images.map((i) => i.ref);
}
