// containerd, the CRI runtime of a worker, as the workers spike ran it (docs/workers-spike.md on
// branch workers), with the config at containerd 2.3.3's current version (4) instead of the
// spike's 3, which containerd migrates at every start with a log line. Its CNI network is
// rendered here too: containerd's CRI plugin is what reads it. Citations: C =
// github.com/containerd/containerd/v2@v2.3.3 in the Go module cache. containerd is not in the flag map
// (it is not Kubernetes), so the reasons and citations here are the model's.
import { flag, BIN, nodeOf, type Directive, type ModelContext, type UnitModel } from './types.ts';
import { nodeKernelDirectives, nodeKernelFiles } from './node-kernel.ts';
import { IMAGE_DIR, IMAGE_NAMES, mirroredRegistries, type ServedImage } from '../images.ts';
import { REGISTRY_CA, REGISTRY_PORT } from './registry.ts';

export const CONTAINERD_SOCKET = '/run/containerd/containerd.sock';
export const CONTAINERD_CONFIG = '/etc/containerd/config.toml';
/** Built here from pause.c and imported on each worker, never pulled (issue 22). */
export const SANDBOX_IMAGE = 'hardwire.local/pause:3.10.2';
export const CNI_CONF_DIR = '/etc/cni/net.d';
export const CNI_CONFLIST = `${CNI_CONF_DIR}/10-bridge.conflist`;
/** The registry host directories (config_path): one directory per registry host, each with its hosts.toml. */
export const CERTS_D = '/etc/containerd/certs.d';
export const DOCKER_IO_HOSTS = `${CERTS_D}/docker.io/hosts.toml`;
/** Where containerd reads a registry's hosts (config_path/<registry>/hosts.toml). */
export const hostsTomlPath = (upstream: string) => `${CERTS_D}/${upstream}/hosts.toml`;

/**
 * Each mirrored registry's own server, the fall-through after the lab registry: docker.io's is
 * registry-1.docker.io (C core/remotes/docker/config/hosts.go:102-104); any other is its own name.
 */
const UPSTREAM_SERVER: Record<ServedImage['upstream'], string> = {
  'docker.io': 'https://registry-1.docker.io',
  'registry.k8s.io': 'https://registry.k8s.io',
};

/**
 * The sandbox image and CNI plugin directory are a worker's unless given (compare's kubeadm host
 * uses kubeadm's); runc's cgroups go through systemd on a cgroup v2 host (the kubelet's cgroupDriver).
 */
export function containerdConfig({
  sandbox = SANDBOX_IMAGE,
  cniBinDir = BIN,
  systemdCgroup = false,
  registryHosts = false,
}: {
  sandbox?: string;
  cniBinDir?: string;
  systemdCgroup?: boolean;
  /** The cluster runs the lab registry: pulls look up ${CERTS_D}/<registry>/hosts.toml. */
  registryHosts?: boolean;
} = {}): string {
  return `# Rendered by hardwire (components/models/containerd.ts). C = github.com/containerd/containerd/v2@v2.3.3.
# The current config version (C version/version.go:41, ConfigVersion = 4); a version 3 file is migrated
# at every start with a log line (C cmd/containerd/server/config/config.go:228 serviceMigrate).
version = 4
root = "/var/lib/containerd"
state = "/run/containerd"
# The gRPC socket is the default, ${CONTAINERD_SOCKET} (C defaults/defaults_linux.go:21); the kubelet's
# containerRuntimeEndpoint points at it.

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    # The Pod sandbox image: the locally built pause, imported on each worker; no Pod pulls from a
    # registry (C internal/cri/config/config.go:298-307 PinnedImages).
    sandbox = "${sandbox}"
${
  registryHosts
    ? `  [plugins."io.containerd.cri.v1.images".registry]
    # Each pull looks up ${CERTS_D}/<registry host>/hosts.toml (C internal/cri/config/config.go:233). The
    # CRI pulls through the transfer service (C internal/cri/server/images/image_pull.go:184-187: this config
    # sets nothing that falls back to the local pull, C internal/cri/config/config.go:564-569 with
    # C internal/cri/config/config_unix.go:33), which hands config_path to the resolver (C internal/cri/server/images/image_pull.go:316,
    # C core/transfer/registry/registry.go:127-128). docker.io's mirror is the lab registry (${DOCKER_IO_HOSTS}).
    config_path = "${CERTS_D}"
`
    : ''
}
[plugins."io.containerd.cri.v1.runtime"]
  # The lab machine's own capability bounding set lacks CAP_SYS_RESOURCE, so nothing on it may lower
  # an oom_score_adj; without this runc fails the sandbox (-998) with "failed to update
  # /proc/self/oom_score_adj: Permission denied" (workers spike, error 5). Clamps to containerd's own
  # score instead (C internal/cri/config/config.go:371-374).
  restrict_oom_score_adj = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        # wire installs every binary in ${BIN}, which is not on the shim's default lookup (C internal/cri/config/config_unix.go:63).
        BinaryName = "${BIN}/runc"
${
  systemdCgroup
    ? `        # systemd, as the kubelet's cgroupDriver: this host runs cgroup v2 with systemd as PID 1 (read by
        # preflight), so runc asks systemd for each container's scope (the shim hands it to runc: C cmd/containerd-shim-runc-v2/runc/container.go:205).
        SystemdCgroup = true`
    : `        # cgroupfs, as the kubelet's cgroupDriver: this host's cgroups are v1 (read by preflight), and a lab
        # container's v1 hierarchies are the machine's, whose PID 1 is not systemd (workers spike).
        SystemdCgroup = false`
}
  [plugins."io.containerd.cri.v1.runtime".cni]
    # The CNI plugins (bridge, host-local, loopback, portmap) sit with the other binaries (C internal/cri/config/config.go:163).
    bin_dirs = ["${cniBinDir}"]
    conf_dir = "${CNI_CONF_DIR}"
`;
}

/** The node's Pod network: a bridge with host-local addresses from this worker's pod CIDR (inventory/pod-cidrs.ts). */
export function cniConflist({ inv, host }: ModelContext): string {
  const subnet = host.podCidr?.text;
  if (!subnet) throw new Error(`${host.name} has no pod CIDR; only workers run containerd`);
  return bridgeConflist(`${inv.cluster.name}-pods`, subnet);
}

/** A CNI bridge network named `name` with addresses from `subnet`. */
export function bridgeConflist(name: string, subnet: string): string {
  return `${JSON.stringify(
    {
      cniVersion: '1.0.0',
      name,
      plugins: [
        // isGateway: cni0 gets the range's first address and is each Pod's default route. No ipMasq:
        // Pod traffic to other nodes keeps its Pod address and is routed between the lab hosts.
        // hairpinMode: a Pod that reaches a Service backed by itself gets its packets back through cni0.
        {
          type: 'bridge',
          bridge: 'cni0',
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: { type: 'host-local', ranges: [[{ subnet }]], routes: [{ dst: '0.0.0.0/0' }] },
        },
        // hostPort mappings; without a hostPort in the Pod it changes nothing.
        { type: 'portmap', capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  )}\n`;
}

/**
 * Routes to every other worker's pod CIDR via that worker's address, as Kelsey Hightower's guide
 * adds them by hand: Pod traffic keeps its Pod address between nodes (no overlay, no masquerade).
 * Replaced at each start, so they come back after a reboot and follow the inventory.
 */
export function podRoutes(
  { inv, host }: Pick<ModelContext, 'inv' | 'host'>,
  because = '',
): Directive[] {
  return inv.workerHosts
    .filter((w) => w.name !== host.name)
    .map((w) => ({
      key: 'ExecStartPre',
      value: `/usr/bin/ip route replace ${w.podCidr!.text} via ${w.address}`,
      why: `Pods on ${w.name} (${w.podCidr!.text}) are reached through ${w.name}${because}`,
    }));
}

/**
 * docker.io's hosts.toml: the lab registry first, then docker.io itself (the top-level server, tried
 * last): on a machine with internet a name the lab registry lacks still resolves; on this one it
 * fails there. Read at each pull, so a change needs no restart.
 */
export function dockerIoHosts(registry: { name: string; address: string }): string {
  return mirrorHosts(registry, 'docker.io');
}

/**
 * A mirrored registry's hosts.toml (docker.io always; registry.k8s.io when an addon's image is
 * served under its name): the lab registry first, then the registry itself, tried last.
 */
export function mirrorHosts(
  registry: { name: string; address: string },
  upstream: ServedImage['upstream'],
): string {
  const at = `https://${registry.address}:${REGISTRY_PORT}`;
  const server = UPSTREAM_SERVER[upstream];
  return `# Rendered by hardwire (components/models/containerd.ts). C = github.com/containerd/containerd/v2@v2.3.3.
# Read at each pull of a ${upstream} image from config_path/${upstream}/hosts.toml (C core/remotes/docker/config/hosts.go:316).
# The [host] entries are tried in order, then the top-level server last (C core/remotes/docker/config/hosts.go:392, :415).

# ${upstream} itself, the fall-through: reached only when the lab registry does not answer or lacks the name
# (C core/remotes/docker/config/hosts.go:390${upstream === 'docker.io' ? ", :102-104: without a hosts.toml, containerd's default for docker.io too" : ''}).
server = "${server}"

# The lab registry on ${registry.name} (components/registry/registry.ts), serving ${upstream === 'docker.io' ? "docker.io's library" : `${upstream}'s`} images
# built on the operator's machine. pull and resolve only (C core/remotes/docker/config/hosts.go:456-459):
# no push goes to a mirror.
[host."${at}"]
  capabilities = ["pull", "resolve"]
  # Its serving cert is signed by the cluster CA, which every worker holds (C core/remotes/docker/config/hosts.go:472-475).
  ca = "${REGISTRY_CA}"
`;
}

/** Each locally built image, imported once containerd is ready (Type=notify: ExecStartPost runs after READY=1). */
function imports(): Directive[] {
  return IMAGE_NAMES.map((n) => ({
    key: 'ExecStartPost',
    value: `${BIN}/ctr -n k8s.io images import ${IMAGE_DIR}/${n}.tar`,
    why: `import the locally built ${n} image into the CRI's namespace (k8s.io); no Pod pulls it from a registry. Idempotent: the same content is already there`,
  }));
}

export function containerdModel(ctx: ModelContext): UnitModel {
  const node = nodeOf(ctx);
  const registry = ctx.inv.hosts.find((h) => h.isRegistry);
  return {
    component: 'containerd',
    description: 'containerd container runtime (hardwire)',
    documentation: 'https://containerd.io/docs/',
    // containerd reports ready through sd_notify (C cmd/containerd/command/notify_systemd.go:31), as its own containerd.service expects.
    type: 'notify',
    binary: `${BIN}/containerd`,
    files: [
      {
        path: CONTAINERD_CONFIG,
        content: containerdConfig({
          systemdCgroup: node.cgroup === 'v2',
          registryHosts: registry !== undefined,
        }),
        mode: 0o644,
        why: "containerd's config (--config): CRI sandbox image, runc and its cgroup driver, CNI dirs, the registry hosts' directory",
      },
      ...(registry
        ? mirroredRegistries(ctx.inv.addons).map((upstream) => ({
            path: hostsTomlPath(upstream),
            content: mirrorHosts(registry, upstream),
            mode: 0o644,
            why: `${upstream}'s mirror: the lab registry, then ${upstream}; read by containerd's CRI at each pull`,
          }))
        : []),
      ...nodeKernelFiles(node),
      {
        path: CNI_CONFLIST,
        content: cniConflist(ctx),
        mode: 0o644,
        why: "the node's Pod network, read by containerd's CRI plugin",
      },
    ],
    directives: [
      {
        key: 'Delegate',
        value: 'yes',
        why: "containerd and runc manage the cgroups below this unit's (as containerd's own unit)",
      },
      {
        key: 'KillMode',
        value: 'process',
        why: "stopping containerd leaves the Pods' shims and containers running (as containerd's own unit)",
      },
      ...nodeKernelDirectives(node),
      ...podRoutes(ctx),
      ...imports(),
    ],
    flags: [
      flag('config', CONTAINERD_CONFIG, 'everything else is in the config file, with its reasons'),
    ],
  };
}
