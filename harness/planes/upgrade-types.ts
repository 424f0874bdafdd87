// What the real `kubeadm upgrade plan` left for compare's upgrade section (planes/kubeadm-upgrade.ts
// runs it). Types only, importing nothing, so the report's types and the section can both name them.

/** kubeadm's `-o json` form of the plan (cmd/kubeadm/app/apis/output/v1alpha3/types.go). */
export interface KubeadmPlanDoc {
  availableUpgrades?: {
    description: string;
    components: { name: string; currentVersion: string; newVersion: string; nodeName?: string }[];
  }[];
  configVersions?: {
    group: string;
    currentVersion: string;
    preferredVersion: string;
    manualUpgradeRequired: boolean;
  }[];
}

export interface KubeadmRunOutput {
  argv: string[];
  exitCode: number;
  ms: number;
  stdout: string;
  stderr: string;
}

export interface KubeadmUpgradePlan {
  to: string;
  /** Where the target's kubeadm was put, and what it says its version is. */
  binary: string;
  version: string;
  /** The plan as text, and as JSON with the parsed document (null when kubeadm printed none). */
  text: KubeadmRunOutput;
  json: KubeadmRunOutput & { plan: KubeadmPlanDoc | null };
  /** Why the command line is what it is: each flag left off, with kubeadm's source at the tag. */
  why: string[];
}
