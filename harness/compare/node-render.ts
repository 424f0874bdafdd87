// The node section (node-section.ts) as terminal lines, Markdown and HTML, from the same rows.
import { PLANES } from '../planes/plane-names.ts';
import {
  NODE_COMPONENTS,
  type NodeComponent,
  type NodeRow,
  type NodeSection,
} from '../planes/node-types.ts';
import { nodeCell } from './node-section.ts';
import { esc, link } from '../../lib/html.ts';
import { VALUES_TH, valuesCell } from './values-cell.ts';
import { mdCell as md } from '../../lib/markdown.ts';

type Site = { file: string; line: number; url: string };
const ref = (s: Site) => `${s.file.split('/').pop()}:${s.line}`;
const label = (row: NodeRow) => (row.kind === 'flag' ? `--${row.name}` : row.name);

function tables(
  s: NodeSection,
  c: NodeComponent,
): { kind: NodeRow['kind']; title: string; rows: NodeRow[] }[] {
  return [
    { kind: 'flag', title: `${c} flags`, rows: s.components[c].flags },
    { kind: 'field', title: `${c} config fields`, rows: s.components[c].fields },
  ];
}

function planesLine(s: NodeSection): string {
  return PLANES.map((p) => `${p}: ${s.planes[p].host ?? s.planes[p].none}`).join('; ');
}

export function nodeSummary(s: NodeSection): string[] {
  const out = ['', `node (kubelet, kube-proxy), worker per plane: ${planesLine(s)}`];
  for (const c of NODE_COMPONENTS) {
    const comp = s.components[c];
    out.push(
      `${c}: ${comp.flags.length} flags and ${comp.fields.length} config fields; ${comp.counts.same} same, ${comp.counts.differs} differ, ${comp.counts.partial} only on some workers`,
    );
    for (const r of [...comp.flags, ...comp.fields].filter((x) => x.class === 'differs')) {
      out.push(
        `  ≠ ${label(r)}: ${PLANES.filter((p) => !s.planes[p].none)
          .map((p) => `${p}=${r.values[p] ?? '—'}`)
          .join('  ')}`,
      );
    }
  }
  return out;
}

export function nodeMarkdown(s: NodeSection): string[] {
  const out = [
    '## The node: kubelet and kube-proxy',
    '',
    `Worker read on each plane: ${md(planesLine(s))}.`,
    '',
  ];
  for (const c of NODE_COMPONENTS) {
    const src = s.components[c].sources;
    out.push(
      `### ${c}`,
      '',
      `Read from: ${
        Object.entries(src)
          .map(([p, x]) => `${p}: ${x.argv}${x.config ? `, ${x.config}` : ''}`)
          .join('; ') || 'no plane runs it'
      }`,
      '',
    );
    for (const t of tables(s, c)) {
      out.push(
        `| ${t.kind === 'flag' ? 'flag' : 'config field'} | ${PLANES.join(' | ')} | class | reason | ${t.kind === 'flag' ? 'registered' : 'declared'} at | read at |`,
        `|${'---|'.repeat(PLANES.length + 5)}`,
      );
      for (const r of t.rows) {
        const cells = PLANES.map((p) => md(nodeCell(s, r, p).text));
        out.push(
          `| ${label(r)} | ${cells.join(' | ')} | ${r.class} | ${md(r.reasons.map((x) => `${x.plane}: ${x.text}`).join('; '))} | ${r.registeredAt ? `[${ref(r.registeredAt)}](${r.registeredAt.url})` : ''} | ${r.consumedAt.map((x) => `[${ref(x)}](${x.url})`).join(' ')} |`,
        );
      }
      out.push('');
    }
  }
  return out;
}

function rowHtml(s: NodeSection, r: NodeRow): string {
  const vals = valuesCell((p) => {
    const cell = nodeCell(s, r, p);
    return {
      text: cell.text,
      absent: cell.absent,
      differs: !cell.absent && r.class !== 'same',
      raw: r.raw[p] ?? undefined,
      why: r.reasons
        .filter((x) => x.plane === p)
        .map((x) => link(x.text, x.url))
        .join('; '),
    };
  });
  const reg = r.registeredAt ? link(ref(r.registeredAt), r.registeredAt.url) : '';
  const reads = r.consumedAt.map((x) => link(ref(x), x.url)).join('<br>');
  return `<tr class="${r.class}" data-flag="${esc(r.name)}"><td class="flag">${esc(label(r))}</td>${vals}<td>${r.class}</td><td class="cite">${reg}</td><td class="cite read">${reads}</td></tr>`;
}

export function nodeHtml(s: NodeSection): string {
  const parts = [
    `<section id="node"><h2>The node: kubelet and kube-proxy</h2><p>Worker read on each plane: ${esc(planesLine(s))}.</p>`,
  ];
  for (const c of NODE_COMPONENTS) {
    const src = s.components[c].sources;
    parts.push(
      `<h3>${c}</h3><p class="def">Read from: ${esc(
        Object.entries(src)
          .map(([p, x]) => `${p}: ${x.argv}${x.config ? `, ${x.config}` : ''}`)
          .join('; ') || 'no plane runs it',
      )}</p>`,
    );
    for (const t of tables(s, c)) {
      parts.push(`<table class="sortable matrix" data-node="${c}" data-kind="${t.kind}"><thead><tr><th>${t.kind === 'flag' ? 'flag' : 'config field'}</th>${VALUES_TH}<th>class</th><th>${t.kind === 'flag' ? 'registered' : 'declared'} at</th><th>read at</th></tr></thead>
<tbody>${t.rows.map((r) => rowHtml(s, r)).join('\n')}</tbody></table>`);
    }
  }
  parts.push('</section>');
  return parts.join('\n');
}
