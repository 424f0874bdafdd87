// The node rows of compare (issue 23): the kubelet's and kube-proxy's flags (from each plane's
// worker's argv) and config fields (from the file its --config names), side by side, each cited to
// its registration (a config field: its declaration) and read sites from the flag map. A plane
// without a worker (k0s, for now) gets "no worker" in its column, not a blank.
import { findConfigField, findFlag } from '../../core/flags/map.ts';
import { configKeys, configValues } from '../planes/config-values.ts';
import { flagsOf, normalizeValue } from '../planes/normalize.ts';
import { PLANES, type PlaneName } from '../planes/plane-names.ts';
import {
  NODE_COMPONENTS,
  type NodeComponent,
  type NodeComponentRows,
  type NodeRow,
  type NodeRowClass,
  type NodeSection,
  type PlaneNode,
} from '../planes/node-types.ts';

/** What the section needs of a collected plane. */
export interface NodeInput {
  collected: boolean;
  node?: PlaneNode;
  pathTokens: [string, string][];
}

const perPlane = <T>(f: (p: PlaneName) => T): Record<PlaneName, T> =>
  Object.fromEntries(PLANES.map((p) => [p, f(p)])) as Record<PlaneName, T>;

function site(s: { file: string; line: number; url: string; module: string; version: string }) {
  return { file: s.file, line: s.line, url: s.url, module: s.module, version: s.version };
}

function citation(
  kind: NodeRow['kind'],
  component: NodeComponent,
  name: string,
  version: string,
): Pick<NodeRow, 'registeredAt' | 'consumedAt' | 'inFlagMap' | 'readBy'> {
  let entry:
    | {
        registeredAt: Parameters<typeof site>[0] | null;
        consumedAt: (Parameters<typeof site>[0] & { kind: string })[];
        readBy: string;
      }
    | undefined;
  try {
    entry =
      kind === 'flag'
        ? findFlag(component, name, version)
        : findConfigField(component, name, version);
  } catch {
    entry = undefined;
  }
  if (!entry) return { registeredAt: null, consumedAt: [], inFlagMap: false };
  return {
    registeredAt: entry.registeredAt ? site(entry.registeredAt) : null,
    consumedAt: entry.consumedAt.slice(0, 3).map((s) => ({ ...site(s), kind: s.kind })),
    inFlagMap: true,
    readBy: entry.readBy,
  };
}

function classify(values: (string | null)[]): NodeRowClass {
  if (values.some((v) => v === null)) return 'partial';
  return new Set(values).size === 1 ? 'same' : 'differs';
}

function rows(
  kind: NodeRow['kind'],
  component: NodeComponent,
  parsed: Record<PlaneName, Map<string, string> | null>,
  planes: Record<PlaneName, NodeInput>,
  version: string,
): NodeRow[] {
  const withNode = PLANES.filter((p) => parsed[p] !== null);
  const names = [...new Set(withNode.flatMap((p) => [...parsed[p]!.keys()]))].sort();
  return names.map((name) => {
    const raw = perPlane((p) => parsed[p]?.get(name) ?? null);
    const values = perPlane((p) =>
      raw[p] === null ? null : normalizeValue(raw[p]!, planes[p].pathTokens),
    );
    const key = kind === 'flag' ? `--${name}` : name;
    const reasons = withNode.flatMap((p) => {
      const r = planes[p].node?.reasons[component]?.[key];
      return r && raw[p] !== null
        ? [{ plane: p, text: r.text, ...(r.url ? { url: r.url } : {}) }]
        : [];
    });
    return {
      kind,
      name,
      values,
      raw,
      class: classify(withNode.map((p) => values[p])),
      reasons,
      ...citation(kind, component, name, version),
    };
  });
}

export function buildNodeSection(
  planes: Record<PlaneName, NodeInput>,
  version: string,
): NodeSection {
  const section: NodeSection = {
    planes: perPlane((p) => {
      const d = planes[p];
      if (!d.collected) return { none: 'not collected' };
      return d.node ? { host: d.node.host } : { none: 'no worker' };
    }),
    components: {} as NodeSection['components'],
  };
  for (const c of NODE_COMPONENTS) {
    const proc = perPlane((p) => (planes[p].collected ? planes[p].node?.components[c] : undefined));
    const flags = rows(
      'flag',
      c,
      perPlane((p) => (proc[p] ? flagsOf(proc[p].argv) : null)),
      planes,
      version,
    );
    const known = configKeys(c, version);
    const fields = rows(
      'field',
      c,
      perPlane((p) =>
        proc[p] ? (proc[p].config ? configValues(proc[p].config, known) : new Map()) : null,
      ),
      planes,
      version,
    );
    const counts: Record<NodeRowClass, number> = { same: 0, differs: 0, partial: 0 };
    for (const r of [...flags, ...fields]) counts[r.class]++;
    const sources = Object.fromEntries(
      PLANES.filter((p) => proc[p]).map((p) => [
        p,
        {
          argv: proc[p]!.argvSource,
          ...(proc[p]!.configSource ? { config: proc[p]!.configSource } : {}),
        },
      ]),
    );
    section.components[c] = { flags, fields, sources, counts } satisfies NodeComponentRows;
  }
  return section;
}

/** The value a plane's column shows for a row: its value, "—" when its worker does not set it, or why it has no worker. */
export function nodeCell(
  section: NodeSection,
  row: NodeRow,
  p: PlaneName,
): { text: string; absent: boolean } {
  const none = section.planes[p].none;
  if (none) return { text: none, absent: true };
  const v = row.values[p];
  return v === null ? { text: '—', absent: true } : { text: v, absent: false };
}
