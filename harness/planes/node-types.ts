// The node in compare (issue 23): what a plane's worker runs for the kubelet and kube-proxy, as a
// collector reads it, and the rows the report builds from it (node-section.ts).
import type { PlaneName } from './plane-names.ts';

export const NODE_COMPONENTS = ['kubelet', 'kube-proxy'] as const;
export type NodeComponent = (typeof NODE_COMPONENTS)[number];

/** One node component: its argv and the file its --config names, each with where it was read. */
export interface NodeProcess {
  pid?: number;
  argv: string[];
  argvSource: string;
  configPath?: string;
  config?: string;
  configSource?: string;
}

/** What a plane's worker runs for the node. */
export interface PlaneNode {
  host: string;
  components: Partial<Record<NodeComponent, NodeProcess>>;
  /** Why the plane sets a flag (key `--name`) or a config field (key: its json path), from the plane's own source. */
  reasons: Partial<Record<NodeComponent, Record<string, { text: string; url?: string }>>>;
}

interface SiteRef {
  file: string;
  line: number;
  url: string;
  module: string;
  version: string;
}

export type NodeRowClass = 'same' | 'differs' | 'partial';

/** A flag (`kind: flag`, name without dashes) or a config field (json path) of a node component. */
export interface NodeRow {
  kind: 'flag' | 'field';
  name: string;
  /** Normalised value per plane; null when the plane's worker does not set it, or the plane has no worker. */
  values: Record<PlaneName, string | null>;
  raw: Record<PlaneName, string | null>;
  /** Across the planes that have a worker. */
  class: NodeRowClass;
  reasons: { plane: PlaneName; text: string; url?: string }[];
  /** A flag's registration; a config field's declaration in the versioned type. */
  registeredAt: SiteRef | null;
  consumedAt: (SiteRef & { kind: string })[];
  inFlagMap: boolean;
  /** The flag map's verdict: read, validation-only, copy-only, none. */
  readBy?: string;
}

export interface NodeComponentRows {
  flags: NodeRow[];
  fields: NodeRow[];
  /** Where each plane's argv and config were read. */
  sources: Partial<Record<PlaneName, { argv: string; config?: string }>>;
  counts: Record<NodeRowClass, number>;
}

export interface NodeSection {
  /** Per plane: the worker host read, or why there is none ("no worker", "not collected"). */
  planes: Record<PlaneName, { host?: string; none?: string }>;
  components: Record<NodeComponent, NodeComponentRows>;
}

export type EndpointKind = 'control-plane host' | 'node-local' | 'shared address' | 'unknown';

/** How a plane's node reaches the API (node-endpoint.ts): the server its clients name and what answers there. */
export interface NodeEndpoint {
  /** The node the clients run on. */
  host: string;
  clients: { component: NodeComponent; server: string; source: string }[];
  kind: EndpointKind;
  /** What answers at the address, as read. */
  target: string;
  /** What losing one control-plane host does to this node's API access. */
  consequence: string;
  /** What in the plane's configuration chose the address (its own words). */
  setBy: string;
}
