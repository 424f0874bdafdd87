// The CIS section of the compare report: the same kube-bench checks side by side for each plane.
import { STATUSES, type Status } from '../cis/report.ts';
import { PLANES, type CompareReport, type PlaneName } from './types.ts';

export interface CisRow { id: string; text: string; scored: boolean; status: Partial<Record<PlaneName, Status>> }

const num = (id: string) => id.split('.').map((n) => n.padStart(3, '0')).join('.');

/** One row per check id, the status on each scanned plane (a plane's hosts agree or the worst counts). */
export function cisRows(r: CompareReport): CisRow[] {
  const rows = new Map<string, CisRow>();
  const rank: Record<Status, number> = { FAIL: 0, WARN: 1, INFO: 2, PASS: 3 };
  for (const p of PLANES) {
    for (const h of r.cis?.[p]?.hosts ?? []) {
      for (const c of h.checks) {
        const row = rows.get(c.id) ?? { id: c.id, text: c.text, scored: c.scored, status: {} };
        const had = row.status[p];
        if (!had || rank[c.status] < rank[had]) row.status[p] = c.status;
        rows.set(c.id, row);
      }
    }
  }
  return [...rows.values()].sort((a, b) => num(a.id).localeCompare(num(b.id)));
}

const md = (s: string) => s.replaceAll('|', '\\|');

export function cisMarkdown(r: CompareReport): string[] {
  if (!r.cis) return [];
  const planes = PLANES.filter((p) => r.cis?.[p]);
  const out = ['## CIS Kubernetes Benchmark, the same checks on each plane', ''];
  out.push(`| plane | ${STATUSES.join(' | ')} | kube-bench |`, `|---|${STATUSES.map(() => '---:').join('|')}|---|`);
  for (const p of planes) out.push(`| ${p} | ${STATUSES.map((s) => r.cis![p]!.totals[s]).join(' | ')} | ${r.cis![p]!.kubeBench.version} ${r.cis![p]!.benchmark}, on ${r.cis![p]!.hosts.map((h) => h.host).join(', ')} |`);
  out.push('', 'Checks whose result is not the same on every plane:', '', `| check | ${planes.join(' | ')} | text |`, `|---|${planes.map(() => '---').join('|')}|---|`);
  for (const row of cisRows(r).filter((x) => new Set(planes.map((p) => x.status[p] ?? '—')).size > 1)) {
    out.push(`| ${row.id} | ${planes.map((p) => row.status[p] ?? '—').join(' | ')} | ${md(row.text)}${row.scored ? '' : ' (not scored)'} |`);
  }
  out.push('');
  return out;
}

const esc = (s: string) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

export function cisHtml(r: CompareReport): string {
  if (!r.cis) return '';
  const planes = PLANES.filter((p) => r.cis?.[p]);
  const totals = planes.map((p) => `<tr data-plane="${p}"><td>${p}</td>${STATUSES.map((s) => `<td>${r.cis![p]!.totals[s]}</td>`).join('')}</tr>`).join('');
  const rows = cisRows(r).map((row) => {
    const differs = new Set(planes.map((p) => row.status[p] ?? '—')).size > 1;
    return `<tr data-check="${esc(row.id)}"${differs ? ' class="differs"' : ''}><td>${esc(row.id)}</td>${planes.map((p) => `<td class="cis-${(row.status[p] ?? 'none').toLowerCase()}">${row.status[p] ?? '—'}</td>`).join('')}<td>${esc(row.text)}</td></tr>`;
  }).join('');
  return `<section id="cis"><h2>CIS Kubernetes Benchmark, the same checks on each plane</h2>
<table id="cis-totals"><thead><tr><th>plane</th>${STATUSES.map((s) => `<th>${s}</th>`).join('')}</tr></thead><tbody>${totals}</tbody></table>
<table class="sortable" id="cis-checks"><thead><tr><th>check</th>${planes.map((p) => `<th>${p}</th>`).join('')}<th>text</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}
