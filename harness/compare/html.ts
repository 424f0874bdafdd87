// One self-contained HTML file: no external CSS, JS or fonts. Tables sort on a header click;
// differing rows and cells are highlighted; citations link to upstream source at the tag.
import { COMPONENTS, PLANES } from '../planes/types.ts';
import { provenLiveText } from './text.ts';
import type { PlaneName } from '../planes/types.ts';
import type { CertRow, CompareReport, FlagRow } from './types.ts';
import { k0sHtml } from './k0s-section.ts';
import { cisHtml } from './cis-section.ts';
import { nodeHtml } from './node-render.ts';
import { kubeletCertsHtml } from './kubelet-cert-section.ts';
import { endpointHtml } from './endpoint-section.ts';
import { ttfpHtml } from './ttfp-section.ts';
import { upgradeHtml } from './upgrade-render.ts';
import { procHtml } from './proc-section.ts';
import { nodeCisHtml } from './node-cis.ts';
import { esc, htmlPage, link, SORT_SCRIPT, SORT_STYLE } from '../../lib/html.ts';
import { VALUES_STYLE, VALUES_TH, valuesCell } from './values-cell.ts';

function flagRow(f: FlagRow, collected: PlaneName[]): string {
  const why = (p: PlaneName) =>
    f.reasons
      .filter((r) => r.plane === p)
      .map((r) => link(r.text, r.url))
      .join('; ');
  const vals = valuesCell((p) => ({
    text: f.values[p] ?? '—',
    absent: f.values[p] === null,
    differs: collected.includes(p) && f.class !== 'same',
    raw: f.raw[p] ?? undefined,
    why: why(p),
  }));
  const reg = f.registeredAt
    ? link(`${f.registeredAt.file.split('/').pop()}:${f.registeredAt.line}`, f.registeredAt.url)
    : '';
  const reads = f.consumedAt
    .map((s) => link(`${s.file.split('/').pop()}:${s.line}`, s.url))
    .join('<br>');
  const def =
    f.class === 'partial' && f.default !== undefined
      ? `<div class="def">default ${esc(f.default || '""')}</div>`
      : '';
  return `<tr class="${f.class}" data-flag="${esc(f.name)}"><td class="flag">--${esc(f.name)}</td>${vals}<td>${f.class}${def}</td><td class="cite">${reg}</td><td class="cite read">${reads}</td><td>${esc(provenLiveText(f.provenLive))}</td></tr>`;
}

/**
 * A DNS name may wrap after each of its dots: four planes' columns of
 * kubernetes.default.svc.cluster.local side by side were 1,509 px wide.
 */
const dnsBreaks = (san: string): string =>
  san.startsWith('DNS:') ? esc(san).replaceAll('.', '.<wbr>') : esc(san);

function certCell(row: CertRow, p: PlaneName): string {
  const c = row.planes[p];
  if (!c) return '<td class="absent">unmatched</td>';
  const hi = (field: string, text: string) =>
    `<div${row.differs.includes(field) ? ' class="d"' : ''}>${text}</div>`;
  return `<td title="${esc(c.path)}">${[
    hi('subject', esc(c.subject)),
    hi('sans', `SAN ${c.sans.map(dnsBreaks).join(' ') || '-'}`),
    hi('keyUsage', `KU ${esc(c.keyUsage.join(', ') || '-')}`),
    hi('extKeyUsage', `EKU ${esc(c.extKeyUsage.join(', ') || '-')}`),
    hi(
      'validityDays',
      `${esc(c.notBefore.slice(0, 10))} → ${esc(c.notAfter.slice(0, 10))} (${c.validityDays} d)`,
    ),
    hi('keyAlgorithm', esc(c.keyAlgorithm)),
    hi('issuer', `issuer ${esc(c.issuer)}`),
    ...(c.server ? [hi('server', `server ${esc(c.server)}`)] : []),
  ].join('')}</td>`;
}

const SCRIPT = `${SORT_SCRIPT}
document.getElementById('only-diff').addEventListener('change', function (e) {
  document.body.classList.toggle('only-diff', e.target.checked);
});`;

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 2em;width:100%}
th,td{border:1px solid #ccc;padding:3px 6px;vertical-align:top;text-align:left;font-size:12px}
th{background:#eee;cursor:pointer;user-select:none;position:sticky;top:0}
${SORT_STYLE}
td{font-family:ui-monospace,monospace}
${VALUES_STYLE}
td.flag{white-space:nowrap} td.cite{font-size:11px;white-space:nowrap;min-width:14em} td:is(.flag,.cite) wbr{display:none}
tr.differs td{background:#fff1d6} tr.partial td{background:#eef4ff}
td.d,div.d{background:#ffd0d0 !important;font-weight:600}
.absent{color:#999} .why{font-family:system-ui,sans-serif;word-break:normal} .def{color:#555}
.planes td{font-family:system-ui,sans-serif} .no{color:#b00;font-weight:600}
#k0s-worker-tree pre,table.proc-tree pre{white-space:pre-wrap;margin:0}
body.only-diff tr.same{display:none}
`;

export function html(r: CompareReport): string {
  const collected = PLANES.filter((p) => r.planes[p].collected);
  const planes = PLANES.map((p) => {
    const pl = r.planes[p];
    return `<tr data-plane="${p}"><td><b>${p}</b></td><td class="${pl.collected ? '' : 'no'}">${pl.collected ? 'collected' : 'not collected'}</td><td>${esc(pl.why)}${pl.notes.map((n) => `<div class="def">${esc(n)}</div>`).join('')}</td></tr>`;
  }).join('');
  const flagTables = COMPONENTS.map((c) => {
    const comp = r.components[c];
    return `<section id="flags-${c}" class="flags"><h2>${c}</h2><p>${comp.counts.same} same, ${comp.counts.differs} differ, ${comp.counts.partial} only in some planes.</p>
<table class="sortable matrix" data-component="${c}"><thead><tr><th>flag</th>${VALUES_TH}<th>class</th><th>registered at</th><th>read at</th><th>proven live</th></tr></thead>
<tbody>${comp.flags.map((f) => flagRow(f, collected)).join('\n')}</tbody></table></section>`;
  }).join('\n');
  const certs = `<table class="sortable matrix" id="certs"><thead><tr><th>role</th><th>differs in</th>${PLANES.map((p) => `<th>${p}</th>`).join('')}</tr></thead><tbody>
${r.certs.map((row) => `<tr class="${row.differs.length || row.matched === 'some' ? 'differs' : 'same'}" data-role="${esc(row.role)}"><td>${esc(row.role)}</td><td>${esc(row.differs.join(', '))}${row.matched === 'some' ? ' (unmatched)' : ''}</td>${PLANES.map((p) => certCell(row, p)).join('')}</tr>`).join('\n')}</tbody></table>`;
  const procs = PLANES.map((p) => {
    if (!r.planes[p].collected)
      return `<section class="proc" data-plane="${p}"><h3>${p}</h3><p class="no">not collected: ${esc(r.planes[p].why)}</p></section>`;
    return `<section class="proc" data-plane="${p}"><h3>${p}</h3><table class="sortable"><thead><tr><th>process</th><th>kind</th><th>parent</th><th>pid / state</th><th>details</th><th>source</th></tr></thead><tbody>${r.processes[
      p
    ]
      .map(
        (pr) =>
          `<tr><td>${esc(pr.name)}</td><td>${pr.kind}</td><td>${esc(pr.parent)}</td><td>${pr.pid ?? ''} ${esc(pr.state ?? '')}</td><td>${Object.entries(
            pr.details,
          )
            .filter(([, v]) => v)
            .map(([k, v]) => `${esc(k)}: ${esc(v)}`)
            .join(
              '<br>',
            )}</td><td>${pr.citation ? link(pr.citation.text, pr.citation.url) : esc(pr.source)}</td></tr>`,
      )
      .join('')}</tbody></table></section>`;
  }).join('\n');
  return htmlPage({
    title: `hardwire compare ${r.kubernetesVersion}`,
    style: STYLE,
    script: SCRIPT,
    body: `<h1>hardwire vs kubeadm vs k0s at Kubernetes ${esc(r.kubernetesVersion)}</h1>
<p>Every plane: cluster <code>${esc(r.params.clusterName)}</code>, node <code>${esc(r.params.nodeName)}</code>, advertise address ${esc(r.params.advertiseAddress)}, service CIDR ${esc(r.params.serviceCIDR)} (first IP ${esc(r.params.firstServiceIp)}), pod CIDR ${esc(r.params.podCIDR)}, DNS domain ${esc(r.params.dnsDomain)}. Generated ${esc(r.generatedAt)}.</p>
<h2>Planes</h2><table class="planes" id="planes"><tbody>${planes}</tbody></table>
${r.notes.map((n) => `<p class="def">${esc(n)}</p>`).join('')}
${ttfpHtml(r.ttfp, esc)}
<p>Paths are normalised: <code>&lt;pki&gt;/</code> is the plane's PKI directory, <code>&lt;conf&gt;/</code> its kubeconfig directory (hover a cell for the raw value). Click a header to sort. <label><input type="checkbox" id="only-diff"> show only differences</label></p>
<h2>Flags</h2>
${flagTables}
${nodeHtml(r.node)}
<h2>Certificates and kubeconfig identities</h2>
${certs}
${kubeletCertsHtml(r, esc)}
${endpointHtml(r, esc)}
<h2>Process model</h2>
${procs}
${procHtml(r.nodeProcs)}
<h2>What k0s collapses into one process</h2><p id="k0s-collapse">${esc(r.k0sCollapse)}</p>
${cisHtml(r)}
${nodeCisHtml(r.nodeCis)}
${upgradeHtml(r.upgrade)}
${k0sHtml(r)}`,
  });
}
