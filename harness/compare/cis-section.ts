// The CIS section of the compare report: the same kube-bench checks side by side for each plane.
import { STATUSES, type HostReport, type Status } from '../cis/index.ts';
import type { PlaneReport } from '../cis/index.ts';
import { PLANES, type PlaneName } from '../planes/types.ts';
import { type CompareReport } from './types.ts';
import { esc } from '../../lib/html.ts';

export interface CisRow {
  id: string;
  text: string;
  scored: boolean;
  status: Partial<Record<PlaneName, Status>>;
}

const num = (id: string) =>
  id
    .split('.')
    .map((n) => n.padStart(3, '0'))
    .join('.');

/** One row per check id, the status on each scanned plane (a plane's hosts agree or the worst counts). */
export function cisRows(r: CompareReport): CisRow[] {
  const rows = new Map<string, CisRow>();
  const rank: Record<Status, number> = { FAIL: 0, WARN: 1, INFO: 2, PASS: 3 };
  for (const p of PLANES) {
    for (const h of r.cis?.[p]?.hosts ?? []) {
      for (const c of h.checks.filter((x) => x.target !== 'node')) {
        // 4.x: node-cis.ts
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

/**
 * One host's counts for a plane: the planes scan different numbers of hosts (hardwire every host of
 * its inventory, kubeadm and k0s one controller), so side by side each shows its worst host.
 */
export function worstHost(c: PlaneReport): HostReport {
  return [...c.hosts].sort(
    (a, b) => b.totals.FAIL - a.totals.FAIL || a.totals.PASS - b.totals.PASS,
  )[0]!;
}

export function cisMarkdown(r: CompareReport): string[] {
  if (!r.cis) return [];
  const planes = PLANES.filter((p) => r.cis?.[p]);
  const out = ['## CIS Kubernetes Benchmark, the same checks on each plane', ''];
  out.push(
    `| plane (worst host) | ${STATUSES.join(' | ')} | kube-bench |`,
    `|---|${STATUSES.map(() => '---:').join('|')}|---|`,
  );
  for (const p of planes) {
    const c = r.cis![p]!;
    const w = worstHost(c);
    out.push(
      `| ${p} (${w.host}${c.hosts.length > 1 ? ` of ${c.hosts.length} hosts` : ''}) | ${STATUSES.map((s) => w.totals[s]).join(' | ')} | ${c.kubeBench.version} ${c.benchmark} |`,
    );
  }
  out.push(
    '',
    'Checks whose result is not the same on every plane:',
    '',
    `| check | ${planes.join(' | ')} | text |`,
    `|---|${planes.map(() => '---').join('|')}|---|`,
  );
  for (const row of cisRows(r).filter(
    (x) => new Set(planes.map((p) => x.status[p] ?? '—')).size > 1,
  )) {
    out.push(
      `| ${row.id} | ${planes.map((p) => row.status[p] ?? '—').join(' | ')} | ${md(row.text)}${row.scored ? '' : ' (not scored)'} |`,
    );
  }
  out.push('');
  return out;
}

export function cisHtml(r: CompareReport): string {
  if (!r.cis) return '';
  const planes = PLANES.filter((p) => r.cis?.[p]);
  const totals = planes
    .map((p) => {
      const w = worstHost(r.cis![p]!);
      return `<tr data-plane="${p}"><td>${p} (${esc(w.host)})</td>${STATUSES.map((s) => `<td>${w.totals[s]}</td>`).join('')}</tr>`;
    })
    .join('');
  const rows = cisRows(r)
    .map((row) => {
      const differs = new Set(planes.map((p) => row.status[p] ?? '—')).size > 1;
      return `<tr data-check="${esc(row.id)}"${differs ? ' class="differs"' : ''}><td>${esc(row.id)}</td>${planes.map((p) => `<td class="cis-${(row.status[p] ?? 'none').toLowerCase()}">${row.status[p] ?? '—'}</td>`).join('')}<td>${esc(row.text)}</td></tr>`;
    })
    .join('');
  return `<section id="cis"><h2>CIS Kubernetes Benchmark, the same checks on each plane</h2>
<table id="cis-totals"><thead><tr><th>plane (worst host)</th>${STATUSES.map((s) => `<th>${s}</th>`).join('')}</tr></thead><tbody>${totals}</tbody></table>
<table class="sortable" id="cis-checks"><thead><tr><th>check</th>${planes.map((p) => `<th>${p}</th>`).join('')}<th>text</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}
