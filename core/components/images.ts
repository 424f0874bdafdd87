// The images a worker runs, built on this machine with imagebuild (go-containerregistry's layout)
// from binaries built here: nothing is ever pulled. Each is a docker-archive tarball, cached under
// ~/.cache/hardwire/images by the hash of its inputs, pushed to each worker and imported by
// containerd's ExecStartPost (models/containerd.ts).
// Built by components/image-build.ts; this table stays free of the build code, so the gates and
// models that name the images do not import it.
import type { WORKER_BINARIES } from './registry/worker-binaries.ts';

type BinaryName = keyof typeof WORKER_BINARIES;

/** Debian's busybox-static (scripts/setup.sh installs it): the busybox image's one binary. */
export const BUSYBOX = '/bin/busybox';
/** Where wire puts the tarballs on a worker. */
export const IMAGE_DIR = '/var/lib/hardwire/images';

export interface ImageSpec {
  ref: string;
  /** Binaries built here that go into it, by BinaryName. */
  from: readonly BinaryName[];
  /** imagebuild's arguments after -ref and -out, given each input's local path. */
  args: (bin: (n: BinaryName) => string) => string[];
  why: string;
}

const BUSYBOX_APPLETS = ['sh', 'sleep', 'cat', 'echo', 'ls', 'ip', 'ping', 'wget', 'nslookup', 'httpd', 'hostname', 'nc', 'date', 'mkdir'];

export const IMAGES = {
  // The sandbox every Pod's namespaces hang on; containerd's pinned sandbox image. Runs as 65535, as upstream's.
  pause: { ref: 'hardwire.local/pause:3.10.2', from: ['pause'], args: (b) => ['-entrypoint', '/pause', '-user', '65535:65535', '-add', `/pause=${b('pause')}`], why: 'the Pod sandbox (containerd\'s pinned sandbox image)' },
  busybox: {
    ref: 'hardwire.local/busybox:1.35.0', from: [],
    args: () => ['-cmd', 'sh', '-add', `/bin/busybox=${BUSYBOX}`, ...BUSYBOX_APPLETS.flatMap((c) => ['-link', `/bin/${c}=busybox`])],
    why: 'the gate Pods and `kubectl run --image=hardwire.local/busybox:1.35.0`: Debian\'s busybox-static 1.35.0',
  },
  coredns: { ref: 'hardwire.local/coredns:v1.14.2', from: ['coredns'], args: (b) => ['-entrypoint', '/coredns', '-add', `/coredns=${b('coredns')}`], why: 'cluster DNS, the version kubeadm v1.36.3 deploys' },
  // Its tag is the catalog's webhook version (not imported: the catalog is build code).
  webhook: {
    ref: 'hardwire.local/webhook:v0.1.0', from: ['webhook'], args: (b) => ['-entrypoint', '/webhook', '-user', '65532:65532', '-add', `/webhook=${b('webhook')}`],
    why: 'stage 2: a validating admission webhook served by a Pod behind a Service (test/webhook-pod.test.ts)',
  },
} as const satisfies Record<string, ImageSpec>;

export type ImageName = keyof typeof IMAGES;
export const IMAGE_NAMES = Object.keys(IMAGES) as ImageName[];

