// The report compare builds from three planes' data (harness/planes/types.ts).
// The report's JSON is the contract of issue 7; extra fields are additions to it.
import type { NodeEndpoint } from '../planes/node-types.ts';
import type { CertFacts } from '../planes/x509.ts';
import type { PlaneReport } from '../cis/index.ts';
import type { NodeSection } from '../planes/node-types.ts';
import type {
  ClusterParams,
  Component,
  K0sModel,
  KubeadmRun,
  KubeletCerts,
  PlaneData,
  PlaneName,
  PlaneProcess,
} from '../planes/types.ts';
import type { NodeProcsSection } from './proc-section.ts';
import type { NodeCisSection } from './node-cis.ts';
import type { UpgradeSection } from './upgrade-section.ts';
import type { TtfpPlane } from './ttfp-section.ts';

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
  consumedAt: {
    file: string;
    line: number;
    url: string;
    module: string;
    version: string;
    kind: string;
  }[];
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
  planes: Record<
    PlaneName,
    {
      collected: boolean;
      why: string;
      version?: string;
      host?: string;
      mode?: string;
      collectMs?: number;
      notes: string[];
      steps: PlaneData['steps'];
    }
  >;
  components: Record<
    Component,
    {
      flags: FlagRow[];
      counts: Record<FlagClass, number>;
      sources: Partial<Record<PlaneName, string>>;
    }
  >;
  certs: CertRow[];
  processes: Record<PlaneName, PlaneProcess[]>;
  k0sCollapse: string;
  /** kube-bench per plane: the same CIS checks side by side. */
  cis?: Partial<Record<PlaneName, PlaneReport>>;
  /** The k0s plane's own facts, when it was collected. */
  k0s?: K0sModel;
  /** The kubeadm plane's `kubeadm init` and what it left running, with each static Pod's live argv. */
  kubeadm?: KubeadmRun & { live: NonNullable<PlaneData['live']> };
  /** The kubelet's and kube-proxy's flags and config fields on each plane's worker (node-section.ts). */
  node: NodeSection;
  /** Per plane: its kubelet's certificates, or why there are none ("no worker", "not collected"). */
  kubeletCerts: Record<PlaneName, KubeletCerts | { none: string }>;
  /** Per plane: the API server its node's kubelet and kube-proxy name, and what answers there (endpoint-section.ts). */
  nodeEndpoints: Record<PlaneName, NodeEndpoint | { none: string }>;
  /** Per plane, each node's process tree (proc-section.ts). */
  nodeProcs: NodeProcsSection;
  /** CIS 4.x on each plane's nodes, side by side (node-cis.ts). */
  nodeCis?: NodeCisSection;
  /** compare --upgrade-to: kubeadm's real upgrade plan beside hardwire's (upgrade-section.ts). */
  upgrade?: UpgradeSection;
  /** Per plane: whole (a Pod Running on a worker) and its time to first Pod (ttfp-section.ts). */
  ttfp: Record<PlaneName, TtfpPlane>;
  notes: string[];
}
