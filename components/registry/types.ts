// What one component is, described once. Everything that lists components derives from these specs.
import type { Inventory, Host } from '../../inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import type { ReadSession as Session } from '../../transport/index.ts';
import type { ModelContext, UnitModel } from '../models/types.ts';

/** Binaries that share one upstream release and one Go module (or source tree). */
/** k0s-etcd and konnectivity are the versions k0s pins, for the k0s plane of `compare`. */
/** kubernetes-node, containerd, runc, cni-plugins, coredns and pause are what a worker runs (issue 22). */
export type BinaryGroup = 'kubernetes' | 'etcd' | 'k0s' | 'kube-bench' | 'k0s-etcd' | 'konnectivity'
  | 'kubernetes-node' | 'containerd' | 'runc' | 'cni-plugins' | 'coredns' | 'pause' | 'imagebuild';

export type Role = 'etcd' | 'control-plane';

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

export interface Check { name: string; run: () => Promise<string> }

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

export interface ComponentSpec<N extends string = string> {
  name: N;
  /** Hosts with this role run it. */
  role: Role;
  /** Binaries installed with it, with their recipes; the first is what its unit runs, the rest are tools on its hosts. */
  binaries: Readonly<Record<string, BinarySpec>>;
  model: (ctx: ModelContext) => UnitModel;
  /** kubeconfig identity (pki/table.ts KUBECONFIGS id) the component authenticates with, if any. */
  kubeconfig?: string;
  gate: Gate;
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
}

export function runsOn(spec: Pick<ComponentSpec, 'role'>, host: Pick<Host, 'isEtcd' | 'isControlPlane'>): boolean {
  return spec.role === 'etcd' ? host.isEtcd : host.isControlPlane;
}
