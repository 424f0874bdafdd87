// compare's "how a node reaches the API" section (issue 41): each plane's node endpoint
// (planes/node-endpoint.ts) as one row per plane, in Markdown, HTML and the summary.
import { PLANES, type PlaneData, type PlaneName } from '../planes/types.ts';
import type { NodeEndpoint } from '../planes/node-types.ts';
import type { CompareReport } from './types.ts';
import { mdCell } from '../../lib/markdown.ts';

export function endpointSection(
  planes: Record<PlaneName, PlaneData>,
): CompareReport['nodeEndpoints'] {
  return Object.fromEntries(
    PLANES.map((p) => [
      p,
      planes[p].nodeEndpoint ?? {
        none: !planes[p].collected ? 'not collected' : planes[p].node ? 'not read' : 'no worker',
      },
    ]),
  ) as CompareReport['nodeEndpoints'];
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
  return [
    '## How a node reaches the API',
    '',
    `| ${ENDPOINT_HEAD.join(' | ')} |`,
    `|${ENDPOINT_HEAD.map(() => '---').join('|')}|`,
    ...endpointRows(r).map((row) => `| ${row.map(mdCell).join(' | ')} |`),
    '',
  ];
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
  return `<h2>How a node reaches the API</h2><table class="sortable" id="node-endpoints"><thead><tr>${ENDPOINT_HEAD.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>
${endpointRows(r)
  .map((row) => `<tr data-plane="${row[0]}">${row.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`)
  .join('\n')}</tbody></table>`;
}
