// The shape of flags/data/<v>/feature-gates.json (cmd/featuregates' dump plus each component's tables).
export interface GateSpec {
  /** The emulated version from which the spec holds ("1.33"); "" for etcd's unversioned specs. */
  version: string;
  default: boolean | null;
  preRelease: string;
  lockToDefault: boolean;
  line: number;
}

export interface GateEntry {
  name: string;
  line: number;
  specs: GateSpec[];
}

export interface GateTable {
  module: string;
  version: string;
  file: string;
  gates: GateEntry[];
}

export interface GateData {
  kubernetesVersion: string;
  etcdVersion: string;
  tables: GateTable[];
  /** component → the tables (module/file) whose gates its binary registers. */
  components: Record<string, string[]>;
}

/** `k8s.io/apiserver/pkg/features/kube_features.go`: a table's key, version-free. */
export const tableKey = (t: { module: string; file: string }): string => `${t.module}/${t.file}`;
