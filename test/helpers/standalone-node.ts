// A standalone worker on a lab host, by the recipe of docs/workers-spike.md: containerd, runc, the
// CNI bridge and a kubelet without an apiserver, running one static Pod from images built here.
// Test scaffolding until wire renders these files from component models (issue 22).
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { ensureAll } from '../../core/components/binaries/index.ts';
import { run } from '../../lib/proc.ts';
import type { BatchFile } from '../../core/transport/batch.ts';
import type { Session } from '../../core/transport/index.ts';
import { NODE_PREPARE_UNIT } from '../../harness/lab/worker.ts';

export const PAUSE_IMAGE = 'hardwire.local/pause:3.10.2';
export const BUSYBOX_IMAGE = 'hardwire.local/busybox:1.35.0';
/** Debian's busybox-static (scripts/setup.sh installs it). */
export const BUSYBOX = '/bin/busybox';

const BIN = ['containerd', 'containerd-shim-runc-v2', 'ctr', 'runc', 'kubelet'] as const;
const CNI = ['bridge', 'host-local', 'loopback', 'portmap'] as const;

/** Builds (or takes from the cache) what the node runs, and writes the two images into dir. */
export async function buildNodeInputs(dir: string): Promise<{ bins: Map<string, string>; images: string[] }> {
  const got = await ensureAll([...BIN, ...CNI, 'pause', 'imagebuild'], { source: 'build' });
  const bins = new Map(got.map((b) => [b.name as string, b.path]));
  const ib = bins.get('imagebuild')!;
  const pause = join(dir, 'pause.tar');
  const busybox = join(dir, 'busybox.tar');
  await run(ib, ['-ref', PAUSE_IMAGE, '-out', pause, '-entrypoint', '/pause', '-user', '65535:65535', '-add', `/pause=${bins.get('pause')!}`], { step: 'image pause' });
  await run(ib, ['-ref', BUSYBOX_IMAGE, '-out', busybox, '-cmd', 'sh', '-add', `/bin/busybox=${BUSYBOX}`,
    ...['sh', 'sleep', 'cat', 'echo', 'ls', 'ip', 'ping'].flatMap((c) => ['-link', `/bin/${c}=busybox`])], { step: 'image busybox' });
  return { bins, images: [pause, busybox] };
}

export const CONTAINERD_CONFIG = `version = 3
root = "/var/lib/containerd"
state = "/run/containerd"

[grpc]
  address = "/run/containerd/containerd.sock"

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "${PAUSE_IMAGE}"

[plugins."io.containerd.cri.v1.runtime"]
  # No CAP_SYS_RESOURCE on this machine: nothing may lower an oom_score_adj (docs/workers-spike.md, error 5).
  restrict_oom_score_adj = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = "/usr/local/bin/runc"
        SystemdCgroup = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["/opt/cni/bin"]
    conf_dir = "/etc/cni/net.d"
`;

/** The bridge on the node's own pod CIDR; isGateway makes cni0 the Pods' gateway (and turns on forwarding). */
export function cniConflist(podCidr: string): string {
  return JSON.stringify({
    cniVersion: '1.0.0',
    name: 'hardwire',
    plugins: [
      { type: 'bridge', bridge: 'cni0', isGateway: true, ipMasq: false, ipam: { type: 'host-local', ranges: [[{ subnet: podCidr }]], routes: [{ dst: '0.0.0.0/0' }] } },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  }, null, 2);
}

export function kubeletConfig(nodeIp: string): string {
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
staticPodPath: /etc/kubernetes/manifests
authentication:
  anonymous:
    enabled: true
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
failSwapOn: false
address: ${nodeIp}
readOnlyPort: 0
`;
}

export const CONTAINERD_UNIT = `[Unit]
Description=containerd (standalone worker test)
Requires=${NODE_PREPARE_UNIT}
After=${NODE_PREPARE_UNIT}

[Service]
# containerd tells systemd when its socket is up (as upstream's containerd.service): ctr works once start returns.
Type=notify
ExecStart=/usr/local/bin/containerd --config /etc/containerd/config.toml
Delegate=yes
KillMode=process
Restart=always
LimitNOFILE=1048576
`;

export function kubeletUnit(nodeIp: string): string {
  return `[Unit]
Description=kubelet (standalone worker test)
Requires=containerd.service
After=containerd.service

[Service]
ExecStart=/usr/local/bin/kubelet --config=/etc/kubernetes/kubelet-config.yaml --node-ip=${nodeIp}
Restart=always
RestartSec=2
`;
}

export const BUSYBOX_POD = `apiVersion: v1
kind: Pod
metadata:
  name: bb
  namespace: default
spec:
  containers:
  - name: bb
    image: ${BUSYBOX_IMAGE}
    imagePullPolicy: Never
    command: ["/bin/sh", "-c", "echo started; while true; do sleep 5; done"]
`;

/** Pushes binaries, images, configs and units in one batch; starts containerd, imports the images, starts the kubelet. */
export async function startStandaloneNode(s: Session, nodeIp: string, podCidr: string, inputs: { bins: Map<string, string>; images: string[] }): Promise<void> {
  const file = (path: string, local: string, mode = 0o755): BatchFile => ({ path, mode, data: { file: local, size: statSync(local).size } });
  const text = (path: string, t: string, mode = 0o644): BatchFile => ({ path, mode, data: Buffer.from(t) });
  await s.writeFilesAtomic([
    ...BIN.map((b) => file(`/usr/local/bin/${b}`, inputs.bins.get(b)!)),
    ...CNI.map((b) => file(`/opt/cni/bin/${b}`, inputs.bins.get(b)!)),
    ...inputs.images.map((i) => file(`/var/lib/hardwire/images/${i.split('/').at(-1)!}`, i, 0o644)),
    text('/etc/containerd/config.toml', CONTAINERD_CONFIG),
    text('/etc/cni/net.d/10-hardwire.conflist', cniConflist(podCidr)),
    text('/etc/kubernetes/kubelet-config.yaml', kubeletConfig(nodeIp)),
    text('/etc/kubernetes/manifests/bb.yaml', BUSYBOX_POD),
    text('/etc/systemd/system/containerd.service', CONTAINERD_UNIT),
    text('/etc/systemd/system/kubelet.service', kubeletUnit(nodeIp)),
  ]);
  await s.exec(['systemctl', 'daemon-reload']);
  await s.exec(['systemctl', 'start', 'containerd.service']);
  for (const i of inputs.images) await s.exec(['ctr', '-n', 'k8s.io', 'images', 'import', `/var/lib/hardwire/images/${i.split('/').at(-1)!}`], { timeoutMs: 60_000 });
  await s.exec(['systemctl', 'start', 'kubelet.service']);
}
