// k0s.yaml for the plane's controllers, with the cluster parameters every plane is built with, and
// the variant the controller of the worker pair runs (k0sWorkerClusterConfig).
import { stringify } from 'yaml';
import { APISERVER_PORT } from '../../../lib/constants.ts';
import type { ClusterParams } from '../types.ts';

export const K0S_DATA = '/var/lib/k0s';
export const K0S_CONFIG = '/etc/k0s/k0s.yaml';
export const K0S_BIN = '/usr/local/bin/k0s';
/** The worker profile the lab's worker runs with (`k0s worker --profile`). */
export const WORKER_PROFILE = 'hardwire-lab';

function spec(p: ClusterParams, address: string): Record<string, unknown> {
  return {
    api: { address, port: APISERVER_PORT, ...(p.extraSANs.length ? { sans: p.extraSANs } : {}) },
    network: { serviceCIDR: p.serviceCIDR, podCIDR: p.podCIDR, clusterDomain: p.dnsDomain },
    storage: { type: 'etcd' },
  };
}

const document = (p: ClusterParams, body: Record<string, unknown>) => ({
  apiVersion: 'k0s.k0sproject.io/v1beta1',
  kind: 'ClusterConfig',
  metadata: { name: p.clusterName },
  spec: body,
});

/** Everything else stays k0s's default (konnectivity, metrics-server, kube-proxy, CoreDNS on). */
export function k0sConfig(p: ClusterParams, address: string): string {
  return stringify(document(p, spec(p, address)));
}

/** The refs the worker's images are built under (images.ts), as k0s's spec.images takes them. */
export interface WorkerImageRefs {
  pause: string;
  kubeProxy: string;
  coredns: string;
}

const imageSpec = (ref: string) => ({
  image: ref.slice(0, ref.lastIndexOf(':')),
  version: ref.slice(ref.lastIndexOf(':') + 1),
});

/**
 * The controller a worker joins, on a lab host. What k0s needs on the worker and why, each choice here:
 * - The worker runs what this machine builds at the versions k0s v1.36.3+k0s.2 pins
 *   (embedded-bins/Makefile.variables: containerd 2.3.3, runc 1.4.3, Kubernetes 1.36.3): this k0s is
 *   built without embedded binaries, and k0s stages each from <data-dir>/bin or PATH
 *   (pkg/assets/stage.go StageExecutable). The same kubelet, containerd and runc as hardwire's workers.
 * - network.provider custom: the default, kube-router, is a DaemonSet whose image would be pulled;
 *   with custom k0s deploys no CNI and the worker gets the CNI bridge plugin built here, as
 *   hardwire's own workers and the kubeadm plane have it.
 * - spec.images: kube-proxy, CoreDNS and pause as built here (images.ts); k0s's manifests name them.
 * - kube-proxy in nftables mode, as on the other two planes (the image carries Debian's nft). k0s
 *   already sets conntrack.maxPerCore 0 (pkg/component/controller/kubeproxy.go).
 * - The worker profile sets failCgroupV1 false: kubelet v1.36 refuses cgroup v1 otherwise
 *   (pkg/kubelet/apis/config/validation/validation_linux.go), and this machine has v1 only. k0s's own
 *   pre-flight check rejects cgroup v1 outright ("cgroup v1 is not supported",
 *   internal/pkg/sysinfo/probes/linux/cgroups.go), so the worker also runs --ignore-pre-flight-checks.
 * - metrics-server and konnectivity-server are disabled on this controller only (worker.ts passes
 *   --disable-components): their worker-side images (quay.io/k0sproject/metrics-server,
 *   apiserver-network-proxy-agent) are not built here and would be pulled. The apiserver then
 *   reaches the kubelet directly, as on the other planes. The four controllers of the plane keep
 *   k0s's defaults.
 */
export function k0sWorkerClusterConfig(
  p: ClusterParams,
  address: string,
  images: WorkerImageRefs,
): string {
  const base = spec(p, address);
  return stringify(
    document(p, {
      ...base,
      network: { ...(base.network as object), provider: 'custom', kubeProxy: { mode: 'nftables' } },
      images: {
        kubeproxy: imageSpec(images.kubeProxy),
        coredns: imageSpec(images.coredns),
        pause: imageSpec(images.pause),
      },
      workerProfiles: [{ name: WORKER_PROFILE, values: { failCgroupV1: false } }],
    }),
  );
}

/** Components the worker's controller runs without (see k0sWorkerClusterConfig). */
export const WORKER_CONTROLLER_DISABLED = ['metrics-server', 'konnectivity-server'];
