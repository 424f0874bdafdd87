// The data a plane collector hands back, and the report built from three of them.
// The report's JSON is the contract of issue 7; extra fields are additions to it.
import type { CertFacts } from './x509.ts';
import type { Inventory } from '../../core/inventory/load.ts';
import type { Logger } from '../../lib/log.ts';

import { PLANES, type PlaneName } from './plane-names.ts';
import type { NodeSection, PlaneNode } from './node-types.ts';
export { PLANES, type PlaneName };

/** The components compared across planes: hardwire's registry. */
import { COMPONENT_NAMES, specOf, type ComponentName } from '../../core/components/registry/index.ts';
/** The components wire starts (the workers' are not compared until wire runs them). */
// The control plane; the node's kubelet and kube-proxy have their own section (node-section.ts).
export const COMPONENTS = COMPONENT_NAMES.filter((n) => specOf(n).role !== 'worker');
export type Component = ComponentName;

/** The cluster parameters every plane is generated with. */
export interface ClusterParams {
  kubernetesVersion: string;
  clusterName: string;
  nodeName: string;
  advertiseAddress: string;
  serviceCIDR: string;
  podCIDR: string;
  dnsDomain: string;
  /** host:port of the cluster endpoint, when it is not the advertise address. */
  controlPlaneEndpoint?: string;
  extraSANs: string[];
  /** The inventory's cluster.extraArgs for the compared components; kubeadm gets them as its extraArgs. */
  extraArgs?: Partial<Record<Component, Record<string, string>>>;
  firstServiceIp: string;
}

export interface ComponentCommand {
  /** argv[0] is the binary as the plane names it. */
  argv: string[];
  /** Where the command line was read: a unit file, /proc/<pid>/cmdline, a manifest. */
  source: string;
}

export interface PlaneCert {
  /** Normalised role, shared across planes: "apiserver", "etcd-server", "kubeconfig/admin". */
  role: string;
  /** Path as the plane has it. */
  path: string;
  kind: 'cert' | 'kubeconfig';
  facts: CertFacts;
  /** For kubeconfigs: the server URL the client connects to. */
  server?: string;
}

export interface PlaneProcess {
  name: string;
  kind: 'systemd-unit' | 'kubelet' | 'static-pod' | 'supervisor' | 'child' | 'in-process';
  /** What starts and watches it. */
  parent: string;
  pid?: number;
  state?: string;
  /** Where this fact was read. */
  source: string;
  details: Record<string, string>;
  citation?: { text: string; url: string };
}

export interface PlaneData {
  plane: PlaneName;
  collected: boolean;
  why: string;
  version?: string;
  host?: string;
  /** "rendered" (unit files only) or "live" (/proc of running units) for hardwire. */
  mode?: string;
  commands: Partial<Record<Component, ComponentCommand>>;
  certs: PlaneCert[];
  processes: PlaneProcess[];
  /** Raw path prefix -> neutral token, longest first; used to normalise flag values. */
  pathTokens: [string, string][];
  /** Evidence: each step the collector ran, with its duration. */
  steps: { step: string; argv?: string[]; ms: number; ok: boolean; output?: string }[];
  notes: string[];
  /** Reason for a flag this plane sets, from its own source (hardwire model `why`, kubeadm source line). */
  flagReasons: Partial<Record<Component, Record<string, { text: string; url?: string }>>>;
  k0s?: K0sModel;
  /** Wall time of this plane's collection, CIS scan included. */
  collectMs?: number;
  /** kube-bench on this plane (compare runs it unless --no-cis). */
  cis?: import('../cis/format.ts').PlaneReport;
  /** kubeadm live: each static Pod container's PID and /proc argv, and whether it equals the manifest. */
  live?: Partial<Record<Component, { pid: number; argv: string[]; sameAsManifest: boolean }>>;
  /** The real `kubeadm init` and what it left running (planes/kubeadm-init.ts). */
  kubeadm?: KubeadmRun;
  /** The kubelet and kube-proxy on this plane's worker (issue 23); absent when the plane has none. */
  node?: PlaneNode;
  /** The kubelet's client and serving certificates, and whether the apiserver verifies the latter (kubelet-certs.ts). */
  kubeletCerts?: KubeletCerts;
  /** Each node's process tree from its /proc (planes/proc-read.ts), issue 23's process model per node. */
  nodeProcs?: import('./proc-tree.ts').HostProcs[];
  /** kube-bench's node section (4.x) on the plane's nodes, when its scan above did not run it (cis/plane.ts scanLabNodes). */
  nodeCis?: import('../cis/format.ts').PlaneReport;
  /** kubeadm: the target's real `kubeadm upgrade plan` (compare --upgrade, planes/kubeadm-upgrade.ts). */
  upgradePlan?: import('./upgrade-types.ts').KubeadmUpgradePlan | { none: string };
  /** What the time-to-first-Pod watcher saw from the bare lab to the Pod on the worker (ttfp-watch.ts). */
  ttfp?: import('./ttfp-watch.ts').TtfpWatch;
}

/** One worker's kubelet certificates as read on its host (issue 23). */
export interface KubeletCerts {
  host: string;
  /** The client cert the kubelet's --kubeconfig names: a file (kubeadm's rotated kubelet-client-current.pem) or embedded data. */
  client: { file: string; embedded: boolean; linkTarget?: string; subject: string; cn: string; o: string[]; issuer: string; notBefore: string; notAfter: string; validityDays: number };
  /** The serving cert: config tlsCertFile, else <cert-dir>/kubelet.crt, the kubelet's self-signed default. */
  serving: { file: string; subject: string; issuer: string; validityDays: number; selfSigned: boolean; signedByClusterCa: boolean };
  /** The apiserver's --kubelet-certificate-authority on this plane, from its live argv; null when absent. */
  apiserverKubeletCa: string | null;
  apiserverArgvSource: string;
  verdict: string;
}

export interface KubeadmRun {
  /** Wall time of `kubeadm init`, and of each of its "[phase]" output sections. */
  init: { ms: number; phases: { phase: string; ms: number }[]; output: string };
  /** kube-system Pods from the API; mirror = a static Pod's mirror (kubernetes.io/config.mirror). */
  mirrorPods: { name: string; phase: string; mirror: boolean }[];
  /** The kubelet's /proc argv, /var/lib/kubelet/config.yaml and kubeadm-flags.env. */
  kubelet: { pid: number; argv: string[]; config: string; flagsEnv: string };
  /** Image refs imported from local tarballs; refs in containerd's k8s.io namespace after init. */
  imported: string[];
  images: string[];
  /** containerd journal lines that mention PullImage (none: nothing was pulled). */
  pulls: string[];
  /** kubeadm's addons' Pods (kube-proxy, CoreDNS) once both are ready. */
  addons?: { name: string; phase: string; ready: boolean; restarts: number }[];
  /**
   * The busybox Pod from the image built here: where it runs, ms from its creation to Running and
   * from the bare lab to Running, and the kubernetes Service as CoreDNS answered inside it.
   */
  firstPod?: { name: string; node: string; ip: string; runningMs: number; sinceLabMs?: number; dns: { name: string; address: string } };
  /** A worker `kubeadm join` added: the join's wall time, ms from its preparation to Ready, and the Pod the scheduler put on it. */
  worker?: { node: string; joinMs: number; readyMs: number; pod: { name: string; node: string; ip: string } };
  /** A second control-plane member `kubeadm join --control-plane` added (kubeadm-join-cp.ts), with the Pod range it was given. */
  controlPlane?: { node: string; joinMs: number; readyMs: number; podCIDR: string };
}

/** One k0s controller as read on its host. */
export interface K0sController {
  host: string;
  address: string;
  topology: 'single' | 'ha';
  /** From `systemctl start k0scontroller` to /readyz ok. */
  readyMs: number;
  mainPid: number;
  mainArgv: string[];
  /** Every process below the k0s supervisor, from /proc. */
  children: { pid: number; ppid: number; name: string; argv: string[] }[];
}

/** What only the k0s plane has: its topologies, its in-process components, its defaults. */
export interface K0sModel {
  version: string;
  controllers: K0sController[];
  /** `k0s etcd member-list` on the first HA controller. */
  etcdMembers: string;
  /** --disable-components names, from `k0s controller --help`. */
  disableComponents: string[];
  /** `k0s config create`. */
  defaultConfig: string;
  /** Everything the controller command adds to its component managers, from its source at the tag. */
  components: import('./planes/k0s/components.ts').K0sComponent[];
  /** Per component: flags whose value differs between the controllers (in `controllers` order), own address as <own-address>. */
  haDelta: Record<string, { flag: string; values: (string | null)[] }[]>;
  /** A worker joined to a controller of its own with `k0s token create --role=worker` (planes/k0s/worker.ts). */
  worker?: import('./planes/k0s/worker-types.ts').K0sWorker;
}

export interface CollectContext {
  inv: Inventory;
  params: ClusterParams;
  stateDir: string;
  log: Logger;
  /** Run kube-bench on the plane while it is up. */
  cis: boolean;
  /** The hardwire plane's hosts: trust an unknown host key on first contact (--accept-new-host-keys), and each gate's timeout. */
  acceptNewHostKeys?: boolean;
  gateTimeoutMs?: number;
}

/** One plane's collector. A k0s collector plugs in here like the other two. */
export interface PlaneCollector {
  plane: PlaneName;
  collect(ctx: CollectContext): Promise<PlaneData>;
}

export function emptyPlane(plane: PlaneName, why: string, collected = false): PlaneData {
  return { plane, collected, why, commands: {}, certs: [], processes: [], pathTokens: [], steps: [], notes: [], flagReasons: {} };
}

export type FlagClass = 'same' | 'differs' | 'partial';

export interface FlagRow {
  name: string;
  /** Normalised value per plane; null when the plane does not pass the flag (or was not collected). */
  values: Record<PlaneName, string | null>;
  raw: Record<PlaneName, string | null>;
  class: FlagClass;
  reason: string;
  reasons: { plane: PlaneName | 'flag-map'; text: string; url?: string }[];
  registeredAt: { file: string; line: number; url: string; module: string; version: string } | null;
  consumedAt: { file: string; line: number; url: string; module: string; version: string; kind: string }[];
  default?: string;
  inFlagMap: boolean;
  /**
   * `flags prove --record` for this flag, per plane that passes it (`--flags-of kubeadm|k0s` for theirs):
   * verdict, sites hit, version and date ("-" when not proven). A plane that does not pass it is absent.
   */
  provenLive: Partial<Record<PlaneName, string>>;
}

export interface CertRow {
  role: string;
  kind: 'cert' | 'kubeconfig';
  planes: Record<PlaneName, (CertFacts & { path: string; server?: string }) | null>;
  /** Fields whose values differ between the planes that have this role. */
  differs: string[];
  matched: 'all' | 'some';
}

export interface CompareReport {
  kubernetesVersion: string;
  generatedAt: string;
  params: ClusterParams;
  planes: Record<PlaneName, { collected: boolean; why: string; version?: string; host?: string; mode?: string; collectMs?: number; notes: string[]; steps: PlaneData['steps'] }>;
  components: Record<Component, { flags: FlagRow[]; counts: Record<FlagClass, number>; sources: Partial<Record<PlaneName, string>> }>;
  certs: CertRow[];
  processes: Record<PlaneName, PlaneProcess[]>;
  k0sCollapse: string;
  /** kube-bench per plane: the same CIS checks side by side. */
  cis?: Partial<Record<PlaneName, import('../cis/format.ts').PlaneReport>>;
  /** The k0s plane's own facts, when it was collected. */
  k0s?: K0sModel;
  /** The kubeadm plane's `kubeadm init` and what it left running, with each static Pod's live argv. */
  kubeadm?: KubeadmRun & { live: NonNullable<PlaneData['live']> };
  /** The kubelet's and kube-proxy's flags and config fields on each plane's worker (node-section.ts). */
  node: NodeSection;
  /** Per plane: its kubelet's certificates, or why there are none ("no worker", "not collected"). */
  kubeletCerts: Record<PlaneName, KubeletCerts | { none: string }>;
  /** Per plane, each node's process tree (proc-section.ts). */
  nodeProcs: import('./proc-section.ts').NodeProcsSection;
  /** CIS 4.x on each plane's nodes, side by side (node-cis.ts). */
  nodeCis?: import('./node-cis.ts').NodeCisSection;
  /** compare --upgrade: kubeadm's real upgrade plan beside hardwire's (upgrade-section.ts). */
  upgrade?: import('./upgrade-section.ts').UpgradeSection;
  /** Per plane: whole (a Pod Running on a worker) and its time to first Pod (ttfp-section.ts). */
  ttfp: Record<PlaneName, import('./ttfp-section.ts').TtfpPlane>;
  notes: string[];
}
