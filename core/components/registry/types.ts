// What one component is, described once. Everything that lists components derives from these specs.
import type { Inventory, Host } from '../../inventory/load.ts';
import type { Logger } from '../../../lib/log.ts';
import type { ReadSession as Session } from '../../transport/index.ts';
import type { ModelContext, UnitModel } from '../models/types.ts';
import type { KubeconfigIdentity, NodeCert } from '../../pki/identity.ts';

/** Binaries that share one upstream release and one Go module (or source tree). */
/** k0s-etcd and konnectivity are the versions k0s pins, for the k0s plane of `compare`. */
/** kubernetes-node, containerd, runc, cni-plugins, coredns and pause are what a worker runs (issue 22). */
/** kube-vip holds the API's virtual address on the control-plane hosts (issue 41). */
/** registry is the CNCF distribution registry, the lab's docker.io mirror (issue 44). */
/** metrics-server is an opt-in cluster addon (cluster.addons), built into an image the lab registry serves. */
/** imagebuild and webhook are hardwire's own Go mains (components/go/<group>/main.go); cri-tools is crictl, on kubeadm plane hosts. */
export type BinaryGroup =
  | 'kubernetes'
  | 'etcd'
  | 'k0s'
  | 'kube-bench'
  | 'k0s-etcd'
  | 'konnectivity'
  | 'kubernetes-node'
  | 'containerd'
  | 'runc'
  | 'cni-plugins'
  | 'coredns'
  | 'pause'
  | 'imagebuild'
  | 'webhook'
  | 'cri-tools'
  | 'kube-vip'
  | 'registry'
  | 'metrics-server'
  | 'kubernetes-debug'
  | 'etcd-debug'
  | 'delve';

/**
 * vip: the control-plane hosts when the inventory sets cluster.apiServerVip. registry: the first
 * control-plane host, when the cluster has workers (the images' mirror, issue 44).
 */
export type Role = 'etcd' | 'control-plane' | 'worker' | 'vip' | 'registry';

/** What runsOn reads of a host; isWorker is optional so control-plane callers need not name it. */
export type HostRoles = Pick<Host, 'isEtcd' | 'isControlPlane'> & {
  isWorker?: boolean;
  isVip?: boolean;
  isRegistry?: boolean;
};

/** One binary hardwire can build, fetch or take from a directory: a run component or a tool. */
export interface BinarySpec {
  group: BinaryGroup;
  /** Go package inside the group's module. */
  goPackage: string;
  /** How the binary states its version, and what the answer must contain. */
  probe: {
    args: string[];
    expect: (version: string) => string;
    /** "go-version-m": a binary that cannot print its version is asked through `go version -m` (its Go build info). */
    via?: 'go-version-m';
    /** The answer starts with the binary's own path (argv[0]), which is taken off before `expect` is matched. */
    argv0?: true;
  };
  /** What hardwire uses it for. */
  why: string;
  /**
   * Directories that ship with the binary and are useless without it (kube-bench's cfg/ with the
   * benchmarks): taken from the same source tree or release archive and cached beside the binary.
   */
  assets?: readonly string[];
}

/** What a gate needs; a wire context has all of it. */
export interface GateContext {
  inv: Inventory;
  clusterDir: string;
  sessions: Map<string, Session>;
  opts: { gateTimeoutMs: number };
  log: Logger;
}

export interface Check {
  name: string;
  run: () => Promise<string>;
}

export interface Gate {
  /** One line for --help and docs: what "healthy" means for this component. */
  proves: string;
  /**
   * Waits until healthy on `hosts`, those just started or restarted; empty when nothing was (a no-op
   * run), which checks all of the component's hosts. Throws a StepError with the journal tail.
   */
  wait(ctx: GateContext, hosts: string[], armed?: unknown): Promise<void>;
  /**
   * Read just before a fresh start (never before a restart) and handed to wait() as `armed`: a
   * change made after it proves a process that is alive now (a Lease acquired by the new leader).
   */
  arm?(ctx: GateContext): Promise<unknown>;
  /** One-shot checks for `hardwire verify` and the drills' baselines. */
  checks(ctx: GateContext): Check[];
}

/** One component for flags/analyzer (its main.go component struct, as JSON). */
export interface FlagTarget {
  /** The analyzer's module directory to load from: '.' (components/go/kubernetes' build list), 'etcd', 'node' (the kubelet's and kube-proxy's). */
  dir: '.' | 'etcd' | 'node';
  /** Package patterns to load; each is imported by <dir>/targets.go, which keeps its module in go.mod. */
  patterns: readonly string[];
  /** Function whose call graph registers the flags: pkgpath.Func. */
  root: string;
  /** Function whose call graph the process runs, for ranking reads (default root). */
  entry?: string;
  /** Registers with the standard library flag package (etcd). */
  stdFlag?: boolean;
  /** Package prefix counted as the component's own app code when ranking reads. */
  appPkg: string;
  /**
   * Its config file's versioned type and the internal type that file is converted to (pkgpath.Type):
   * the map then lists every field of the file, with its declaration and read sites.
   */
  configType?: string;
  internalConfigType?: string;
}

/** A command of k8s.io/kubernetes: cmd/<cmd>, whose app.<newCommand> builds its flag set. */
export function kubeCommand(dir: '.' | 'node', cmd: string, newCommand: string): FlagTarget {
  const app = `k8s.io/kubernetes/cmd/${cmd}/app`;
  return {
    dir,
    patterns: [`k8s.io/kubernetes/cmd/${cmd}`],
    root: `${app}.${newCommand}`,
    appPkg: app,
  };
}

/** The version-skew policy's upgrade steps, in order. */
export const UPGRADE_STEPS = ['etcd', 'kube-apiserver', 'controllers', 'node'] as const;
export type UpgradeStep = (typeof UPGRADE_STEPS)[number];

export interface ComponentSpec<N extends string = string> {
  name: N;
  /** Hosts with this role run it. */
  role: Role;
  /** Binaries installed with it, with their recipes; the first is what its unit runs, the rest are tools on its hosts. */
  binaries: Readonly<Record<string, BinarySpec>>;
  model: (ctx: ModelContext) => UnitModel;
  /**
   * The identity it authenticates to the apiserver with, if any: the certificate table
   * (pki/table.ts) issues its client cert and places /etc/kubernetes/<file> on its hosts, read by it.
   */
  kubeconfig?: KubeconfigIdentity;
  /** Certificates it serves with, one per host that runs it (pki/table.ts issues and places them). */
  certs?: readonly NodeCert[];
  gate: Gate;
  /**
   * The TCP ports it binds on its host: preflight fails a host where another process holds one
   * (kubeadm's PortOpenCheck). Empty: it binds none that another process could take first.
   */
  listens: readonly { port: number; why: string }[];
  /**
   * Start order: lower starts first. Components with the same order start together and form one
   * wire phase (`stage`, its id in --json durationsMs).
   */
  order: number;
  stage: string;
  /** Units on the same host this one is ordered after (systemd After=), if that host runs them. */
  after?: readonly string[];
  /**
   * On a fresh start, queue its start with systemd right after those of the `after` units on the
   * same host: its After= holds it until they report ready, so it starts then, not when their gate
   * has seen them. Its own stage still gates it, in order. (Not for a component that should wait
   * for more than its unit's readiness: kube-scheduler started before its apiserver's /readyz backs
   * its informers off.) Restarts are never queued: they stay one host at a time.
   */
  queueFreshStart?: boolean;
  /** Leader-election Lease in kube-system, if it elects a leader. */
  lease?: string;
  /**
   * Its step in an upgrade, in the version-skew policy's order (core/upgrade/order.ts gives each
   * step's rule): `upgrade plan` lists, and `upgrade apply` restarts, the steps in this order.
   */
  upgradeStep: UpgradeStep;
  /**
   * Where the flag map's analyzer finds its flags (flags/analyzer, run by `hardwire flags
   * --regenerate` with the registry's list). None: the flag map has no data for it, and its model's
   * reasons cite the source themselves (containerd, which is not Kubernetes).
   */
  flagTarget?: FlagTarget;
}

export function hasRole(host: HostRoles, role: Role): boolean {
  switch (role) {
    case 'etcd':
      return host.isEtcd;
    case 'worker':
      return host.isWorker === true;
    case 'vip':
      return host.isVip === true;
    case 'registry':
      return host.isRegistry === true;
    case 'control-plane':
      return host.isControlPlane;
  }
}

export function runsOn(spec: Pick<ComponentSpec, 'role'>, host: HostRoles): boolean {
  return hasRole(host, spec.role);
}
