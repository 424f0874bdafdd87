// Builds the report from collected planes: flag matrices, certificate matrix, process models.
import { findFlag } from '../../core/flags/map.ts';
import { loadProven, provenText, type ProvenRecord } from '../../core/flags/proven.ts';
import { flagsOf, normalizeValue } from '../planes/normalize.ts';
import { buildNodeSection } from './node-section.ts';
import { kubeletCertsSection } from './kubelet-cert-section.ts';
import { endpointSection } from './endpoint-section.ts';
import { ttfpSection } from './ttfp-section.ts';
import { buildProcSection } from './proc-section.ts';
import { buildNodeCis } from './node-cis.ts';
import { COMPONENTS, PLANES } from '../planes/types.ts';
import type { ClusterParams, Component, PlaneData, PlaneName } from '../planes/types.ts';
import type { CertRow, CompareReport, FlagClass, FlagRow } from './types.ts';

type PerPlane<T> = Record<PlaneName, T>;
const perPlane = <T>(f: (p: PlaneName) => T): PerPlane<T> =>
  Object.fromEntries(PLANES.map((p) => [p, f(p)])) as PerPlane<T>;

function site(s: { file: string; line: number; url: string; module: string; version: string }) {
  return { file: s.file, line: s.line, url: s.url, module: s.module, version: s.version };
}

function flagMapEntry(component: Component, name: string, version: string) {
  try {
    return findFlag(component, name, version);
  } catch {
    return undefined; // no map for this version: columns stay empty, a note says so
  }
}

function classify(values: (string | null)[]): FlagClass {
  if (values.some((v) => v === null)) return 'partial';
  return new Set(values).size === 1 ? 'same' : 'differs';
}

function reasonFor(row: Omit<FlagRow, 'reason'>, collected: PlaneName[]): string {
  if (row.class === 'same') return '';
  const absent = collected.filter((p) => row.values[p] === null);
  const present = collected.filter((p) => row.values[p] !== null);
  const parts: string[] = [];
  if (row.class === 'partial' && row.default !== undefined) {
    const def = row.default === '' ? '""' : row.default;
    const same = present.every((p) => row.values[p] === row.default);
    parts.push(
      `${absent.join(', ')} ${absent.length === 1 ? 'leaves' : 'leave'} it at the default ${def}${same ? ', so the effective value is the same' : ''}`,
    );
  }
  for (const p of present) {
    const r = row.reasons.find((x) => x.plane === p);
    if (r) parts.push(`${p}: ${r.text}`);
  }
  return parts.join('; ');
}

/** Each plane's `flags prove --record` for the component: hardwire's unit, or `--flags-of kubeadm|k0s`. */
function provenRecords(component: Component, version: string): PerPlane<ProvenRecord | undefined> {
  return perPlane((p) => loadProven(component, version, p === 'hardwire' ? undefined : p));
}

/** The proven-live cell of the planes that pass the flag (their value is set). */
function provenLive(
  name: string,
  values: PerPlane<string | null>,
  records: PerPlane<ProvenRecord | undefined>,
): FlagRow['provenLive'] {
  return Object.fromEntries(
    PLANES.filter((p) => values[p] !== null).map((p) => [p, provenText(records[p], name)]),
  );
}

export function flagRows(
  component: Component,
  planes: PerPlane<PlaneData>,
  version: string,
  notes: string[],
): FlagRow[] {
  const collected = PLANES.filter((p) => planes[p].collected && planes[p].commands[component]);
  const records = provenRecords(component, version);
  const parsed = perPlane((p) =>
    collected.includes(p)
      ? flagsOf(planes[p].commands[component]!.argv)
      : new Map<string, string>(),
  );
  const names = [...new Set(collected.flatMap((p) => [...parsed[p].keys()]))].sort();
  const missing: string[] = [];
  const rows = names.map((name): FlagRow => {
    const raw = perPlane((p) => parsed[p].get(name) ?? null);
    const values = perPlane((p) =>
      raw[p] === null ? null : normalizeValue(raw[p]!, planes[p].pathTokens),
    );
    const entry = flagMapEntry(component, name, version);
    if (!entry) missing.push(name);
    const reasons: FlagRow['reasons'] = [];
    for (const p of collected) {
      const r = planes[p].flagReasons[component]?.[name];
      if (r && raw[p] !== null)
        reasons.push({ plane: p, text: r.text, ...(r.url ? { url: r.url } : {}) });
    }
    const base = {
      name,
      values,
      raw,
      class: classify(collected.map((p) => values[p])),
      reasons,
      registeredAt: entry?.registeredAt ? site(entry.registeredAt) : null,
      consumedAt: (entry?.consumedAt ?? []).slice(0, 3).map((s) => ({ ...site(s), kind: s.kind })),
      ...(entry ? { default: entry.default } : {}),
      inFlagMap: entry !== undefined,
      provenLive: provenLive(name, values, records),
    };
    return { ...base, reason: reasonFor(base, collected) };
  });
  if (missing.length)
    notes.push(
      `${component}: not in the flag map for ${version}, so "registered at"/"read at" are empty: ${missing.map((m) => `--${m}`).join(', ')}`,
    );
  return rows;
}

const CERT_FIELDS = [
  'subject',
  'sans',
  'keyUsage',
  'extKeyUsage',
  'validityDays',
  'keyAlgorithm',
  'issuer',
  'server',
] as const;

export function certRows(planes: PerPlane<PlaneData>): CertRow[] {
  const roles = new Map<string, 'cert' | 'kubeconfig'>();
  for (const p of PLANES) for (const c of planes[p].certs) roles.set(c.role, c.kind);
  const collected = PLANES.filter((p) => planes[p].collected);
  return [...roles.entries()]
    .sort(([a, ka], [b, kb]) => ka.localeCompare(kb) || a.localeCompare(b))
    .map(([role, kind]) => {
      const cells = perPlane((p) => {
        const c = planes[p].certs.find((x) => x.role === role);
        return c
          ? {
              ...c.facts,
              path: c.path,
              ...(c.server ? { server: normalizeValue(c.server, []) } : {}),
            }
          : null;
      });
      const have = collected.filter((p) => cells[p] !== null);
      const differs = CERT_FIELDS.filter((f) => {
        const vals = have.map((p) =>
          JSON.stringify(
            f === 'sans'
              ? [...(cells[p]!.sans ?? [])].sort()
              : ((cells[p] as Record<string, unknown>)[f] ?? null),
          ),
        );
        return new Set(vals).size > 1;
      });
      return {
        role,
        kind,
        planes: cells,
        differs,
        matched: have.length === collected.length ? 'all' : 'some',
      };
    });
}

export function k0sSentence(k0s: PlaneData): string {
  if (!k0s.collected) {
    return `k0s could not be collected on this machine (${k0s.why.split('. Pass')[0]}), so this report cannot say from the running tool what k0s folds into one process; on hardwire each component is its own systemd unit, on kubeadm each is its own static Pod under the kubelet.`;
  }
  const children = k0s.processes.filter((p) => p.kind === 'child').map((p) => p.name);
  const inproc = k0s.processes.filter((p) => p.kind === 'in-process').map((p) => p.name);
  return (
    `k0s runs one supervisor process (k0s controller, one systemd unit) that starts ${children.join(', ')} as its children${inproc.length ? ` and runs ${inproc.length} more components inside itself (${inproc.join(', ')}), some only under a condition (see the k0s section)` : ''}. ` +
    'hardwire has one systemd unit per component and kubeadm one static Pod per component under the kubelet. ' +
    'For failure that means: on k0s, one unit restart (or one crash of the k0s process) takes every child and every in-process controller down and up together, and k0s, not systemd, restarts a child that dies; on hardwire and kubeadm, systemd or the kubelet restarts each component on its own.'
  );
}

function nodeCisOf(planes: PerPlane<PlaneData>): {
  nodeCis?: NonNullable<CompareReport['nodeCis']>;
} {
  const s = buildNodeCis(planes);
  return s ? { nodeCis: s } : {};
}

export function buildReport(params: ClusterParams, planes: PerPlane<PlaneData>): CompareReport {
  const notes: string[] = [];
  const components = Object.fromEntries(
    COMPONENTS.map((c) => {
      const flags = flagRows(c, planes, params.kubernetesVersion, notes);
      const counts = { same: 0, differs: 0, partial: 0 } as Record<FlagClass, number>;
      for (const f of flags) counts[f.class]++;
      const sources = Object.fromEntries(
        PLANES.filter((p) => planes[p].commands[c]).map((p) => [p, planes[p].commands[c]!.source]),
      );
      return [c, { flags, counts, sources }];
    }),
  ) as CompareReport['components'];
  const collected = PLANES.filter((p) => planes[p].collected);
  if (collected.length < PLANES.length)
    notes.push(`rows are classified across the collected planes only (${collected.join(', ')})`);
  return {
    kubernetesVersion: params.kubernetesVersion,
    generatedAt: new Date().toISOString(),
    params,
    planes: perPlane((p) => {
      const d = planes[p];
      return {
        collected: d.collected,
        why: d.why,
        ...(d.version ? { version: d.version } : {}),
        ...(d.host ? { host: d.host } : {}),
        ...(d.mode ? { mode: d.mode } : {}),
        ...(d.collectMs !== undefined ? { collectMs: d.collectMs } : {}),
        notes: d.notes,
        steps: d.steps,
      };
    }),
    components,
    certs: certRows(planes),
    processes: perPlane((p) => planes[p].processes),
    k0sCollapse: k0sSentence(planes.k0s),
    ...(planes.k0s.k0s ? { k0s: planes.k0s.k0s } : {}),
    ...(planes.kubeadm.kubeadm
      ? { kubeadm: { ...planes.kubeadm.kubeadm, live: planes.kubeadm.live ?? {} } }
      : {}),
    node: buildNodeSection(planes, params.kubernetesVersion),
    kubeletCerts: kubeletCertsSection(planes),
    nodeEndpoints: endpointSection(planes),
    ttfp: ttfpSection(planes),
    nodeProcs: buildProcSection(planes),
    ...nodeCisOf(planes),
    ...(PLANES.some((p) => planes[p].cis)
      ? {
          cis: Object.fromEntries(
            PLANES.filter((p) => planes[p].cis).map((p) => [p, planes[p].cis!]),
          ),
        }
      : {}),
    notes,
  };
}
