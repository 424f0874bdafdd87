// compare's "how a node reaches the API" section (issue 41): each plane's node endpoint
// (planes/node-endpoint.ts) as one row per plane, in Markdown, HTML and the summary.
import { PLANES, type PlaneData, type PlaneName } from '../planes/types.ts';
import type { NodeEndpoint } from '../planes/node-types.ts';
import type { CompareReport } from './types.ts';
import { fromWorkers, planeTableHtml, planeTableMarkdown } from './plane-table.ts';

const TITLE = 'How a node reaches the API';

export function endpointSection(
  planes: Record<PlaneName, PlaneData>,
): CompareReport['nodeEndpoints'] {
  return fromWorkers(planes, (p) => p.nodeEndpoint);
}

const has = (v: NodeEndpoint | { none: string }): v is NodeEndpoint => !('none' in v);

export const ENDPOINT_HEAD = [
  'plane',
  'node',
  'server (kubelet, kube-proxy)',
  'what answers there',
  'chosen by',
  'losing one control-plane host',
];

export function endpointRows(r: CompareReport): string[][] {
  return PLANES.map((p) => {
    const v = r.nodeEndpoints[p];
    if (!has(v)) return [p, v.none, '', '', '', ''];
    return [
      p,
      v.host,
      v.clients.map((c) => `${c.component}: ${c.server} (${c.source})`).join('; '),
      `${v.kind}: ${v.target}`,
      v.setBy,
      v.consequence,
    ];
  });
}

export function endpointMarkdown(r: CompareReport): string[] {
  return planeTableMarkdown(TITLE, ENDPOINT_HEAD, endpointRows(r));
}

export function endpointSummary(r: CompareReport): string[] {
  return [
    '',
    'how a node reaches the API:',
    ...PLANES.map((p) => {
      const v = r.nodeEndpoints[p];
      return `  ${p}: ${has(v) ? `${v.clients[0]?.server ?? 'no server'}, ${v.kind}: ${v.target}` : v.none}`;
    }),
  ];
}

export function endpointHtml(r: CompareReport, esc: (s: string) => string): string {
  return planeTableHtml(TITLE, 'node-endpoints', ENDPOINT_HEAD, endpointRows(r), esc);
}
