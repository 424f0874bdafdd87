// The images a worker runs, built on this machine with imagebuild (go-containerregistry's layout)
// from binaries built here: nothing is ever pulled. Each is a docker-archive tarball, cached under
// ~/.cache/hardwire/images by the hash of its inputs, pushed to each worker and imported by
// containerd's ExecStartPost (models/containerd.ts).
// Built by components/image-build.ts; this table stays free of the build code, so the gates and
// models that name the images do not import it.
import type { WORKER_BINARIES } from './registry/worker-binaries.ts';
import type { AddonName } from '../inventory/schema.ts';

type BinaryName = keyof typeof WORKER_BINARIES;
/** The control plane's binaries, by their registry names (registry/index.ts; not imported: it imports this file through the models). */
type ControlPlaneBinary =
  | 'etcd'
  | 'etcdctl'
  | 'kube-apiserver'
  | 'kube-controller-manager'
  | 'kube-scheduler';

/** Debian's busybox-static (scripts/setup.sh installs it): the busybox image's one binary. */
export const BUSYBOX = '/bin/busybox';
/** Where wire puts the tarballs on a worker. */
export const IMAGE_DIR = '/var/lib/hardwire/images';

export interface ImageSpec<N extends string = BinaryName> {
  ref: string;
  /** Binaries built here that go into it, by BinaryName. */
  from: readonly N[];
  /** imagebuild's arguments after -ref and -out, given each input's local path and each `local` file's (the host architecture's). */
  args: (bin: (n: N) => string, local: (file: string) => string) => string[];
  /** Files of this machine (not built here) that go into it: their content is part of the cache key. */
  local?: readonly string[];
  /**
   * Debian packages of this machine's release, fetched with `apt-get download` into
   * ~/.cache/hardwire/debs and unpacked with `dpkg-deb -x` into one tree with `files` (path →
   * content; a path ending in / is a directory) written over it: the tree goes in with imagebuild's -tree. The .debs and the files are
   * part of the cache key. No maintainer script runs: what a postinst would create is in `files`.
   */
  debian?: { packages: readonly string[]; files: Readonly<Record<string, string>> };
  why: string;
}

const BUSYBOX_APPLETS = [
  'sh',
  'sleep',
  'cat',
  'echo',
  'ls',
  'ip',
  'ping',
  'wget',
  'nslookup',
  'httpd',
  'hostname',
  'nc',
  'date',
  'mkdir',
];

export const IMAGES = {
  // The sandbox every Pod's namespaces hang on; containerd's pinned sandbox image. Runs as 65535, as upstream's.
  pause: {
    ref: 'hardwire.local/pause:3.10.2',
    from: ['pause'],
    args: (b) => ['-entrypoint', '/pause', '-user', '65535:65535', '-add', `/pause=${b('pause')}`],
    why: "the Pod sandbox (containerd's pinned sandbox image)",
  },
  busybox: {
    ref: 'hardwire.local/busybox:1.35.0',
    from: [],
    local: [BUSYBOX],
    args: (_, local) => [
      '-cmd',
      'sh',
      '-add',
      `/bin/busybox=${local(BUSYBOX)}`,
      ...BUSYBOX_APPLETS.flatMap((c) => ['-link', `/bin/${c}=busybox`]),
    ],
    why: "the gate Pods and `kubectl run --image=hardwire.local/busybox:1.35.0`: Debian's busybox-static 1.35.0",
  },
  coredns: {
    ref: 'hardwire.local/coredns:v1.14.2',
    from: ['coredns'],
    args: (b) => ['-entrypoint', '/coredns', '-add', `/coredns=${b('coredns')}`],
    why: 'cluster DNS, the version kubeadm v1.36.3 deploys',
  },
  // Its tag is the catalog's webhook version (not imported: the catalog is build code).
  webhook: {
    ref: 'hardwire.local/webhook:v0.2.0',
    from: ['webhook'],
    args: (b) => [
      '-entrypoint',
      '/webhook',
      '-user',
      '65532:65532',
      '-add',
      `/webhook=${b('webhook')}`,
    ],
    why: 'stage 2: a validating admission webhook served by a Pod behind a Service (test/webhook-pod.test.ts)',
  },
} as const satisfies Record<string, ImageSpec>;

export type ImageName = keyof typeof IMAGES;
export const IMAGE_NAMES = Object.keys(IMAGES) as ImageName[];

/**
 * kubeadm's own image names: exactly what `kubeadm config images list --kubernetes-version v1.36.3`
 * prints (test/kubeadm-images.test.ts runs it), so `kubeadm init` finds every image already in
 * containerd and pulls none. The control-plane images carry the same binaries hardwire runs, on a
 * PATH, because kubeadm's static Pod manifests name the binary only (`command: [kube-apiserver, …]`):
 * a container's argv[0] is looked up on the image's PATH. Upstream's images keep them in
 * /usr/local/bin, as here. pause and CoreDNS are the images above under kubeadm's names.
 */
const PATH_ENV = ['-env', 'PATH=/usr/local/bin:/usr/bin:/bin'];
const onPath = (names: string[], bin: (n: string) => string) => [
  ...PATH_ENV,
  '-entrypoint',
  `/usr/local/bin/${names[0]}`,
  ...names.flatMap((n) => ['-add', `/usr/local/bin/${n}=${bin(n)}`]),
];
const cp = (
  name: ControlPlaneBinary,
  ref: string,
  why: string,
  extra: ControlPlaneBinary[] = [],
): ImageSpec<ControlPlaneBinary | BinaryName> => ({
  ref,
  from: [name, ...extra],
  args: (b) => onPath([name, ...extra], b as (n: string) => string),
  why,
});
const renamed = (spec: ImageSpec, ref: string): ImageSpec => ({
  ...spec,
  ref,
  why: `${spec.why}, under kubeadm's name`,
});

export const KUBEADM_IMAGES = {
  'kube-apiserver': cp(
    'kube-apiserver',
    'registry.k8s.io/kube-apiserver:v1.36.3',
    "kubeadm's kube-apiserver static Pod",
  ),
  'kube-controller-manager': cp(
    'kube-controller-manager',
    'registry.k8s.io/kube-controller-manager:v1.36.3',
    "kubeadm's kube-controller-manager static Pod",
  ),
  'kube-scheduler': cp(
    'kube-scheduler',
    'registry.k8s.io/kube-scheduler:v1.36.3',
    "kubeadm's kube-scheduler static Pod",
  ),
  // etcdctl beside etcd, as upstream's etcd image has it: `etcdctl member list` inside the Pod.
  etcd: cp(
    'etcd',
    'registry.k8s.io/etcd:3.6.8-0',
    "kubeadm's local etcd static Pod (kubeadm v1.36.3 pins etcd 3.6.8-0, the etcd hardwire runs)",
    ['etcdctl'],
  ),
  // /usr/sbin on its PATH: knftables looks nft up there. The nft itself, with its libraries, is copied from the
  // lab's Debian rootfs by the plane that imports it (harness/planes/kube-proxy-image.ts).
  'kube-proxy': {
    ref: 'registry.k8s.io/kube-proxy:v1.36.3',
    from: ['kube-proxy'],
    args: (b) => [
      '-env',
      'PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      '-entrypoint',
      '/usr/local/bin/kube-proxy',
      '-add',
      `/usr/local/bin/kube-proxy=${b('kube-proxy')}`,
    ],
    why: "kubeadm's kube-proxy DaemonSet (nftables mode: Debian's nft joins it)",
  },
  coredns: renamed(IMAGES.coredns, 'registry.k8s.io/coredns/coredns:v1.14.2'),
  pause: renamed(IMAGES.pause, 'registry.k8s.io/pause:3.10.2'),
} as const satisfies Record<string, ImageSpec<ControlPlaneBinary | BinaryName>>;

/** Where wire puts the images the registry serves, on the registry's host; its ExecStartPost pushes each. */
export const REGISTRY_IMAGE_DIR = '/var/lib/hardwire/registry-images';

/**
 * nginx from Debian's own package (1.22.1 in bookworm) and the libraries its binary links
 * (ldd /usr/sbin/nginx: libcrypt1, libpcre2-8-0, libssl3, zlib1g, libc6; libgcc-s1 is libc6's own
 * dependency). Debian's nginx.conf is kept: it runs workers as www-data (so /etc/passwd names it),
 * writes its pid to /run/nginx.pid, its temp files under /var/lib/nginx (whose children nginx makes
 * at start) and its logs to /var/log/nginx, here linked to the container's stdout and stderr as
 * upstream's image does. What nginx's postinst makes is made here instead: the default site
 * enabled, and its page at /var/www/html (a link to nginx-common's "Welcome to nginx!").
 */
const NGINX_PACKAGES = [
  'nginx',
  'nginx-common',
  'libc6',
  'libgcc-s1',
  'libcrypt1',
  'libpcre2-8-0',
  'libssl3',
  'zlib1g',
];

/**
 * An image the lab registry serves: the names it is pushed under (repository:tag, without the host)
 * and the registry those names belong to, whose certs.d/<upstream>/hosts.toml on each worker names
 * the lab registry as its mirror (models/containerd.ts).
 */
export interface ServedImage {
  spec: ImageSpec<string>;
  as: readonly string[];
  upstream: 'docker.io' | 'registry.k8s.io';
}

/** The images the lab registry serves on every cluster with workers (docker.io's names, without the host). */
export const REGISTRY_IMAGES = {
  // The same tarball as the workers' busybox (imported as hardwire.local/busybox:1.35.0).
  busybox: {
    spec: IMAGES.busybox,
    as: ['library/busybox:latest', 'library/busybox:1.35.0'],
    upstream: 'docker.io',
  },
  nginx: {
    spec: {
      ref: 'docker.io/library/nginx:1.22.1',
      from: [],
      debian: {
        packages: NGINX_PACKAGES,
        files: {
          '/etc/passwd':
            'root:x:0:0:root:/root:/bin/sh\nwww-data:x:33:33:www-data:/var/www:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n',
          '/etc/group': 'root:x:0:\nwww-data:x:33:\nnogroup:x:65534:\n',
          '/run/': '',
        },
      },
      args: () => [
        '-env',
        'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        '-cmd',
        '/usr/sbin/nginx',
        '-cmd',
        '-g',
        '-cmd',
        'daemon off;',
        '-link',
        '/etc/nginx/sites-enabled/default=/etc/nginx/sites-available/default',
        '-link',
        '/var/log/nginx/access.log=/dev/stdout',
        '-link',
        '/var/log/nginx/error.log=/dev/stderr',
        '-link',
        '/var/www/html/index.nginx-debian.html=/usr/share/nginx/html/index.html',
      ],
      why: "`kubectl create deploy x --image=nginx`: Debian's nginx 1.22.1, run as `nginx -g 'daemon off;'`",
    },
    as: ['library/nginx:latest', 'library/nginx:1.22.1'],
    upstream: 'docker.io',
  },
} as const satisfies Record<string, ServedImage>;

/**
 * The opt-in addons' images (cluster.addons), served under their upstream names so the addon's
 * manifest names them as upstream does. metrics-server's is upstream's Dockerfile (the module's
 * Dockerfile: the binary at /, USER 65534, ENTRYPOINT ["/metrics-server"]) on an empty base in
 * place of distroless/static: the binary is static (cgo off).
 */
export const ADDON_IMAGES = {
  'metrics-server': {
    spec: {
      ref: 'registry.k8s.io/metrics-server/metrics-server:v0.8.0',
      from: ['metrics-server'],
      args: (b) => [
        '-entrypoint',
        '/metrics-server',
        '-user',
        '65534:65534',
        '-add',
        `/metrics-server=${b('metrics-server')}`,
      ],
      why: 'the metrics-server addon (cluster.addons): sigs.k8s.io/metrics-server v0.8.0 built here',
    },
    as: ['metrics-server/metrics-server:v0.8.0'],
    upstream: 'registry.k8s.io',
  },
} as const satisfies Record<AddonName, ServedImage>;

/** Every image the lab registry of a cluster with these addons serves, by name. */
export function servedImages(addons: readonly AddonName[]): Record<string, ServedImage> {
  return {
    ...REGISTRY_IMAGES,
    ...Object.fromEntries(addons.map((a) => [a, ADDON_IMAGES[a]])),
  };
}

/** The registries whose names the lab registry serves for these addons: each gets a hosts.toml. */
export function mirroredRegistries(addons: readonly AddonName[]): ServedImage['upstream'][] {
  return [...new Set(Object.values(servedImages(addons)).map((i) => i.upstream))];
}
