// The images a k0s worker runs, built here with imagebuild (components/image-build.ts) and imported
// by k0s itself: its OCI bundle reconciler loads every tarball in /var/lib/k0s/images into
// containerd's k8s.io namespace (k0s pkg/component/worker/ocibundle.go). The cluster config names
// them (spec.images, config.ts), so no Pod on the worker ever pulls from a registry.
import { IMAGES, KUBEADM_IMAGES, type ImageSpec } from '../../../core/components/images.ts';
import { nftClosure, withNft } from '../kube-proxy-image.ts';
import type { Logger } from '../../../lib/log.ts';
import { K0S_DATA } from './config.ts';

/** Where k0s's worker looks for image bundles (k0s pkg/config/cfgvars.go OCIBundleDir: <data-dir>/images). */
export const K0S_IMAGE_DIR = `${K0S_DATA}/images`;

/**
 * CoreDNS as k0s's Deployment runs it: `runAsNonRoot: true` with no runAsUser, NET_BIND_SERVICE only
 * (k0s pkg/component/controller/coredns.go, securityContext). The kubelet refuses a root image there
 * ("container has runAsNonRoot and image will run as root"), so the image names a numeric non-root
 * user, as upstream's distroless CoreDNS image does (65532, "nonroot").
 */
export const COREDNS_NONROOT: ImageSpec = {
  ...IMAGES.coredns,
  ref: 'hardwire.local/coredns-nonroot:v1.14.2',
  args: (b) => [
    '-entrypoint',
    '/coredns',
    '-user',
    '65532:65532',
    '-add',
    `/coredns=${b('coredns')}`,
  ],
  why: "cluster DNS for k0s's CoreDNS Deployment, which requires a non-root image",
};

export type K0sWorkerImage = 'pause' | 'kube-proxy' | 'coredns' | 'busybox';

/**
 * pause and kube-proxy are kubeadm's (the same tarballs compare's kubeadm plane imports: kube-proxy
 * with Debian's nft for its nftables mode), CoreDNS the non-root one above, busybox the test Pod's.
 */
export async function k0sWorkerImages(
  log: Logger,
): Promise<Record<K0sWorkerImage, ImageSpec<string>>> {
  return {
    pause: KUBEADM_IMAGES.pause as ImageSpec<string>,
    'kube-proxy': withNft(KUBEADM_IMAGES['kube-proxy'], await nftClosure(log)) as ImageSpec<string>,
    coredns: COREDNS_NONROOT as ImageSpec<string>,
    busybox: IMAGES.busybox as ImageSpec<string>,
  };
}
