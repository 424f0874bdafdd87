// The plan as one HTML page: a table per component (flags, its config fields, then its feature gates), what is new at the target, the etcd hops
// and the order. Flag and gate names never break mid-word (nowrap); citations and notes wrap, so
// the page reads at 1400 px without a horizontal scroll.
import { LIVE_HEAD, liveRows, liveTitle } from './live-format.ts';
import {
  componentTables,
  FIELD_HEAD,
  GATE_HEAD,
  HEAD,
  NEW_HEAD,
  newTables,
  pathLines,
  type PlanDoc,
} from './format.ts';
import { esc, htmlPage } from '../../lib/html.ts';

function table(head: string[], rows: string[][], kind: string): string {
  const th = head.map((h) => `<th>${esc(h)}</th>`).join('');
  const tr = rows
    .map(
      (r) =>
        `<tr class="${esc((r[1] ?? '').split(' ')[0] ?? '')}">${r.map((c, i) => `<td${i === 0 ? ' class="name"' : ''}>${esc(c)}</td>`).join('')}</tr>`,
    )
    .join('\n');
  return `<table class="${kind}"><thead><tr>${th}</tr></thead><tbody>\n${tr}\n</tbody></table>`;
}

export const PLAN_STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:16px;max-width:1400px}
table{border-collapse:collapse;width:100%;table-layout:auto;margin:8px 0 20px}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}
td.name{white-space:nowrap;overflow-wrap:normal;font-family:ui-monospace,monospace} td.name wbr{display:none}
tr.removed,tr.renamed,tr.unknown,tr.blocking{background:#fdd}tr.locked,tr.deprecated,tr.default-changed{background:#ffe}
pre{white-space:pre-wrap}`;

/** The plan's headings and tables, its title at heading level `h` (audit's page embeds it at 2). */
export function planSections(doc: PlanDoc, h = 1): string {
  const parts = [
    `<h1>Upgrade plan ${esc(doc.from)} → ${esc(doc.to)}</h1>`,
    `<p id="blocking">Blocking: ${doc.blocking}</p>`,
  ];
  for (const t of componentTables(doc)) {
    parts.push(
      `<section data-component="${esc(t.component)}"><h2>${esc(t.title)}</h2>`,
      table(HEAD, t.flags, 'flags'),
    );
    if (t.fields.length) parts.push(table(FIELD_HEAD, t.fields, 'fields'));
    if (t.unsetDefaults) parts.push(`<p class="unset-defaults">${esc(t.unsetDefaults)}</p>`);
    if (t.gates.length) parts.push(table(GATE_HEAD, t.gates, 'gates'));
    parts.push('</section>');
  }
  for (const t of newTables(doc))
    parts.push(
      `<section data-new="${esc(t.component)}"><h2>${esc(t.title)}</h2>`,
      table(NEW_HEAD, t.rows, 'new'),
      '</section>',
    );
  if (doc.live)
    parts.push(
      '<h2>Live cluster</h2>',
      `<p id="live">${esc(liveTitle(doc.live, doc.to))}</p>`,
      ...(doc.live.checked ? [table(LIVE_HEAD, liveRows(doc.live), 'live')] : []),
    );
  parts.push(
    '<h2>etcd path and component order</h2>',
    `<pre>${esc(pathLines(doc).join('\n'))}</pre>`,
  );
  const body = parts.join('\n');
  return h === 1
    ? body
    : body.replace(/<(\/?)h([12])\b/g, (_, slash, n) => `<${slash}h${Number(n) + h - 1}`);
}

export function formatHtml(doc: PlanDoc): string {
  return htmlPage({
    title: `Upgrade plan ${doc.from} → ${doc.to}`,
    style: PLAN_STYLE,
    body: planSections(doc),
  });
}
