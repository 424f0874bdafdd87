// CIS 4.x side by side (issue 23): kube-bench's node section (worker node config files, kubelet,
// kube-proxy) on each plane's nodes, one row per check id, and for each row where one plane FAILs
// and another does not, one line saying why, from kube-bench's own audit (the file it read, what it
// found) or, where the cause was read on the hosts, from NODE_FAIL_WHY.
import { STATUSES, zero, type Counts, type HostReport, type Status } from '../cis/index.ts';
import type { PlaneReport } from '../cis/index.ts';
import { PLANES, type PlaneName } from '../planes/plane-names.ts';
import { esc } from '../../lib/html.ts';
import { mdCell as md } from '../../lib/markdown.ts';

export interface NodeCisRow {
  id: string;
  text: string;
  scored: boolean;
  /** The worst status over the plane's nodes (FAIL, WARN, INFO, PASS). */
  status: Partial<Record<PlaneName, Status>>;
  /** Per plane, the check as kube-bench reported it on the node with that status. */
  found: Partial<Record<PlaneName, { host: string; actual: string; paths: string[] }>>;
  /** One line per plane that FAILs where another plane does not. */
  why: string[];
}

export interface NodeCisSection {
  planes: Record<
    PlaneName,
    { hosts: string[]; totals: Counts; kubeBench: string } | { none: string }
  >;
  rows: NodeCisRow[];
}

/** What compare learned on the hosts about a FAIL, by check id and plane (the fallback is kube-bench's audit). */
export const NODE_FAIL_WHY: Record<string, Partial<Record<PlaneName, string>>> = {
  '4.1.1': {
    k0s: "the kubelet has no unit of its own on k0s: kube-bench checks k0s's, /etc/systemd/system/k0sworker.service, which `k0s install worker` writes 0644",
  },
  '4.1.9': {
    kubeadm:
      'kubeadm writes /var/lib/kubelet/config.yaml 0644 (kubelet-start phase); hardwire renders it 0600',
  },
  '4.2.1': {
    k0s: "k0s's kubelet config (/run/k0s/kubelet/config.yaml) does not set authentication.anonymous.enabled and kube-bench fails a field it cannot find; the kubelet's default for it is false (pkg/kubelet/apis/config/v1beta1/defaults.go:93)",
  },
  '4.2.2': {
    k0s: "k0s's kubelet config does not set authorization.mode and kube-bench fails a field it cannot find; the kubelet's default for it is Webhook (pkg/kubelet/apis/config/v1beta1/defaults.go:102)",
  },
};

const rank: Record<Status, number> = { FAIL: 0, WARN: 1, INFO: 2, PASS: 3 };
const num = (id: string) =>
  id
    .split('.')
    .map((n) => n.padStart(3, '0'))
    .join('.');

/** A plane's node hosts: each host that ran the node target, its checks cut to that target. */
export function nodeHosts(reports: (PlaneReport | undefined)[]): HostReport[] {
  return reports
    .flatMap((r) => r?.hosts ?? [])
    .filter((h) => h.targets.includes('node'))
    .map((h) => ({ ...h, checks: h.checks.filter((c) => c.target === 'node') }));
}

/** Why a plane FAILs a check: what compare knows, else the file kube-bench read and what it found there. */
export function failWhy(
  id: string,
  plane: PlaneName,
  c: { actual: string; paths: string[] },
): string {
  const known = NODE_FAIL_WHY[id]?.[plane];
  if (known) return `${plane}: ${known}`;
  const where = c.paths.length ? c.paths.join(', ') : 'the running process';
  const got = c.actual.split('\n')[0]?.trim();
  return `${plane}: kube-bench read ${where} and found ${got ? `"${got.slice(0, 100)}"` : 'nothing (the plane keeps this elsewhere, or not at all)'}`;
}

/** One row per 4.x check id; a plane's nodes agree or the worst status counts. */
export function mergeNodeChecks(byPlane: Partial<Record<PlaneName, HostReport[]>>): NodeCisRow[] {
  const rows = new Map<string, NodeCisRow>();
  for (const p of PLANES) {
    for (const h of byPlane[p] ?? []) {
      for (const c of h.checks) {
        const row = rows.get(c.id) ?? {
          id: c.id,
          text: c.text,
          scored: c.scored,
          status: {},
          found: {},
          why: [],
        };
        const had = row.status[p];
        if (!had || rank[c.status] < rank[had]) {
          row.status[p] = c.status;
          row.found[p] = { host: h.host, actual: c.actual, paths: c.paths ?? [] };
        }
        rows.set(c.id, row);
      }
    }
  }
  const out = [...rows.values()].sort((a, b) => num(a.id).localeCompare(num(b.id)));
  for (const row of out) {
    const have = PLANES.filter((p) => row.status[p]);
    if (!have.some((p) => row.status[p] === 'FAIL') || have.every((p) => row.status[p] === 'FAIL'))
      continue;
    row.why = have
      .filter((p) => row.status[p] === 'FAIL')
      .map((p) => failWhy(row.id, p, row.found[p]!));
  }
  return out;
}

export function buildNodeCis(
  planes: Record<PlaneName, { collected: boolean; cis?: PlaneReport; nodeCis?: PlaneReport }>,
): NodeCisSection | undefined {
  const hosts = Object.fromEntries(
    PLANES.map((p) => [p, nodeHosts([planes[p].cis, planes[p].nodeCis])]),
  ) as Record<PlaneName, HostReport[]>;
  if (PLANES.every((p) => hosts[p].length === 0)) return undefined;
  return {
    planes: Object.fromEntries(
      PLANES.map((p) => {
        const hs = hosts[p];
        if (!planes[p].collected) return [p, { none: 'not collected' }];
        if (hs.length === 0) return [p, { none: 'no node scanned' }];
        const totals = zero();
        for (const h of hs) for (const c of h.checks) totals[c.status]++;
        const kb = planes[p].nodeCis ?? planes[p].cis!;
        return [
          p,
          {
            hosts: hs.map((h) => h.host),
            totals,
            kubeBench: `${kb.kubeBench.version} ${kb.benchmark}`,
          },
        ];
      }),
    ) as NodeCisSection['planes'],
    rows: mergeNodeChecks(hosts),
  };
}

const cell = (r: NodeCisRow, p: PlaneName) => r.status[p] ?? '—';
const differs = (r: NodeCisRow) => new Set(PLANES.map((p) => cell(r, p))).size > 1;

function planeLine(s: NodeCisSection, p: PlaneName): string {
  const x = s.planes[p];
  return 'none' in x
    ? `${p}: ${x.none}`
    : `${p} (${x.hosts.join(', ')}): ${STATUSES.map((st) => `${x.totals[st]} ${st}`).join(' / ')}`;
}

export function nodeCisSummary(s: NodeCisSection | undefined): string[] {
  if (!s) return [];
  const fails = s.rows.filter((r) => r.why.length > 0);
  return [
    '',
    `CIS 4.x (node), per plane over its nodes: ${PLANES.map((p) => planeLine(s, p)).join('; ')}`,
    ...fails.flatMap((r) => r.why.map((w) => `  FAIL ${r.id} ${w}`)),
  ];
}

export function nodeCisMarkdown(s: NodeCisSection | undefined): string[] {
  if (!s) return [];
  const out = [
    '## CIS 4.x (worker node) side by side',
    '',
    "kube-bench's node section on every node of each plane (a plane's nodes agree or the worst status counts).",
    '',
  ];
  out.push(...PLANES.map((p) => `- ${planeLine(s, p)}`), '');
  out.push(
    `| check | ${PLANES.join(' | ')} | text | why a plane FAILs |`,
    `|---|${PLANES.map(() => '---').join('|')}|---|---|`,
  );
  for (const r of s.rows)
    out.push(
      `| ${r.id} | ${PLANES.map((p) => cell(r, p)).join(' | ')} | ${md(r.text)}${r.scored ? '' : ' (not scored)'} | ${md(r.why.join('; '))} |`,
    );
  out.push('');
  return out;
}

export function nodeCisHtml(s: NodeCisSection | undefined): string {
  if (!s) return '';
  const rows = s.rows
    .map(
      (r) =>
        `<tr data-check="${esc(r.id)}"${differs(r) ? ' class="differs"' : ''}><td>${esc(r.id)}</td>${PLANES.map((p) => `<td data-plane="${p}" class="cis-${cell(r, p).toLowerCase()}">${cell(r, p)}</td>`).join('')}<td class="why">${esc(r.text)}</td><td class="why">${r.why.map((w) => `<div>${esc(w)}</div>`).join('')}</td></tr>`,
    )
    .join('');
  return `<section id="cis-node"><h2>CIS 4.x (worker node) side by side</h2><ul>${PLANES.map((p) => `<li>${esc(planeLine(s, p))}</li>`).join('')}</ul>
<table class="sortable" id="cis-node-checks"><thead><tr><th>check</th>${PLANES.map((p) => `<th>${p}</th>`).join('')}<th>text</th><th>why a plane FAILs</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}
