// The data a plane collector hands back (compare builds its report from three of them; drills and
// prove start the same planes).
import type { CertFacts } from './x509.ts';
import type { PlaneReport } from '../cis/index.ts';
import type { HostProcs } from './proc-tree.ts';
import type { KubeadmUpgradePlan } from './upgrade-types.ts';
import type { TtfpWatch } from './ttfp-watch.ts';
import type { K0sComponent } from './k0s/components.ts';
import type { K0sWorker } from './k0s/worker-types.ts';
import type { NodeEndpoint } from './node-types.ts';
import type { Inventory } from '../../core/inventory/load.ts';
import type { Logger } from '../../lib/log.ts';

import { PLANES, type PlaneName } from './plane-names.ts';
import type { PlaneNode } from './node-types.ts';
export { PLANES, type PlaneName };

/** The components compared across planes: hardwire's registry. */
import {
  COMPONENT_NAMES,
  specOf,
  type ComponentName,
} from '../../core/components/registry/index.ts';
/** The components wire starts (the workers' are not compared until wire runs them). */
// The control plane; the node's kubelet and kube-proxy have their own section (node-section.ts).
// kube-vip is not compared flag by flag (neither kubeadm nor k0s runs it); how each plane's nodes
// reach the API is its own row (compare/endpoints.ts). Nor is the lab's image registry (neither
// plane runs one; it has no flag map).
export const COMPONENTS = COMPONENT_NAMES.filter(
  (n) => specOf(n).role !== 'worker' && specOf(n).role !== 'vip' && specOf(n).role !== 'registry',
);
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
  cis?: PlaneReport;
  /** kubeadm live: each static Pod container's PID and /proc argv, and whether it equals the manifest. */
  live?: Partial<Record<Component, { pid: number; argv: string[]; sameAsManifest: boolean }>>;
  /** The real `kubeadm init` and what it left running (planes/kubeadm-init.ts). */
  kubeadm?: KubeadmRun;
  /** The kubelet and kube-proxy on this plane's worker (issue 23); absent when the plane has none. */
  node?: PlaneNode;
  /** The kubelet's client and serving certificates, and whether the apiserver verifies the latter (kubelet-certs.ts). */
  kubeletCerts?: KubeletCerts;
  /** Each node's process tree from its /proc (planes/proc-read.ts), issue 23's process model per node. */
  nodeProcs?: HostProcs[];
  /** kube-bench's node section (4.x) on the plane's nodes, when its scan above did not run it (cis/plane.ts scanLabNodes). */
  nodeCis?: PlaneReport;
  /** kubeadm: the target's real `kubeadm upgrade plan` (compare --upgrade-to, planes/kubeadm-upgrade.ts). */
  upgradePlan?: KubeadmUpgradePlan | { none: string };
  /** What the time-to-first-Pod watcher saw from the bare lab to the Pod on the worker (ttfp-watch.ts). */
  ttfp?: TtfpWatch;
  /** How the plane's node reaches the API: the server its kubelet and kube-proxy name (node-endpoint.ts). */
  nodeEndpoint?: NodeEndpoint;
}

/** One worker's kubelet certificates as read on its host (issue 23). */
export interface KubeletCerts {
  host: string;
  /** The client cert the kubelet's --kubeconfig names: a file (kubeadm's rotated kubelet-client-current.pem) or embedded data. */
  client: {
    file: string;
    embedded: boolean;
    linkTarget?: string;
    subject: string;
    cn: string;
    o: string[];
    issuer: string;
    notBefore: string;
    notAfter: string;
    validityDays: number;
  };
  /** The serving cert: config tlsCertFile, else <cert-dir>/kubelet.crt, the kubelet's self-signed default. */
  serving: {
    file: string;
    subject: string;
    issuer: string;
    validityDays: number;
    selfSigned: boolean;
    signedByClusterCa: boolean;
  };
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
  firstPod?: {
    name: string;
    node: string;
    ip: string;
    runningMs: number;
    sinceLabMs?: number;
    dns: { name: string; address: string };
  };
  /** A worker `kubeadm join` added: the join's wall time, ms from its preparation to Ready, and the Pod the scheduler put on it. */
  worker?: {
    node: string;
    joinMs: number;
    readyMs: number;
    pod: { name: string; node: string; ip: string };
  };
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
  components: K0sComponent[];
  /** Per component: flags whose value differs between the controllers (in `controllers` order), own address as <own-address>. */
  haDelta: Record<string, { flag: string; values: (string | null)[] }[]>;
  /** A worker joined to a controller of its own with `k0s token create --role=worker` (planes/k0s/worker.ts). */
  worker?: K0sWorker;
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
  return {
    plane,
    collected,
    why,
    commands: {},
    certs: [],
    processes: [],
    pathTokens: [],
    steps: [],
    notes: [],
    flagReasons: {},
  };
}
