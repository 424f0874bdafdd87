// The prove report as one self-contained HTML page: the data of --md (the run, a row per flag, a
// row per cited site), each site linking to its line at the tag, tables sortable on a header click.
// Flag names and citations never wrap mid-word, so the page reads at 1400 px without a sideways scroll.
import type { ProveReport } from './index.ts';
import type { SiteResult } from './classify.ts';
import { bestSite, siteNote, summary, value } from './format.ts';
import { esc, htmlPage, link, SORT_SCRIPT, SORT_STYLE } from '../../lib/html.ts';

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1400px}
table{border-collapse:collapse;margin:.5em 0 2em;width:100%}
th,td{border:1px solid #ccc;padding:3px 6px;vertical-align:top;text-align:left;font-size:12px}
th{background:#eee;cursor:pointer;user-select:none}
${SORT_STYLE}
td.flag,td.cite{font-family:ui-monospace,monospace;white-space:nowrap;overflow-wrap:normal} td:is(.flag,.cite) wbr{display:none}
tr.hit td.verdict{background:#dff5dd} tr.not-hit td.verdict{background:#fff1d6} tr.off td.verdict{background:#e6e6f5} tr.contradiction td.verdict{background:#ffd0d0} tr.not-provable td.verdict,tr.unset td.verdict{background:#ffd0d0}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px} dt{font-weight:600} dd{margin:0;font-family:ui-monospace,monospace;overflow-wrap:anywhere}
`;

const cls = (verdict: string) => verdict.replaceAll(' ', '-');
const hits = (s: SiteResult) => `${s.hits}${s.capped ? '+' : ''}`;

export function formatHtml(r: ProveReport): string {
  const flags = r.flags
    .map((f) => {
      const s = bestSite(f);
      const note = f.verdict === 'hit' ? value(f) : (f.reason ?? '');
      return (
        `<tr class="${cls(f.verdict)}" data-flag="${esc(f.flag)}"><td class="flag">--${esc(f.flag)}</td><td class="verdict">${f.verdict}</td>` +
        `<td class="cite">${s ? link(s.ref, s.url) : ''}</td><td>${s?.status === 'hit' ? hits(s) : ''}</td><td>${esc(s?.at?.function ?? '')}</td><td>${esc(note)}</td></tr>`
      );
    })
    .join('\n');
  const sites = r.flags
    .flatMap((f) =>
      f.sites.map(
        (s) =>
          `<tr class="${cls(s.status)}${s.contradiction ? ' contradiction' : ''}" data-flag="${esc(f.flag)}" data-ref="${esc(s.ref)}"><td class="flag">--${esc(f.flag)}</td><td class="cite">${link(s.ref, s.url)}</td>` +
          `<td class="verdict">${s.status}</td><td>${hits(s)}</td><td>${esc(siteNote(s))}</td></tr>`,
      ),
    )
    .join('\n');
  const of = r.flagsOf;
  const translated = of
    ? `<h2>${esc(of.tool)}'s flags on hardwire's host</h2>
<p>${esc(`${of.command.join(' ')} at ${of.version} (sha256 ${of.sha256}), read from ${of.source}`)}</p>
<table class="sortable" id="translated"><thead><tr><th>flag</th><th>${esc(of.tool)}'s value</th><th>value run</th><th>how</th></tr></thead>
<tbody>
${of.flags.map((t) => `<tr class="${t.notProvable ? 'not-provable' : 'hit'}" data-flag="${esc(t.flag)}"><td class="flag">--${esc(t.flag)}</td><td>${esc(t.original)}</td><td class="verdict">${esc(t.run ?? 'not run')}</td><td>${esc(t.notProvable ? `not provable: ${t.notProvable}` : t.how)}</td></tr>`).join('\n')}
</tbody></table>`
    : '';
  const run: [string, string][] = [
    ['host', r.host],
    ['date', r.date],
    ['Kubernetes', r.kubernetesVersion],
    ['debug binary', `${r.debugBinary.name} sha256 ${r.debugBinary.sha256}`],
    ['delve', `${r.dlv.version} sha256 ${r.dlv.sha256}`],
    ['gate passed by', r.holder],
    ['argv', r.argv.join(' ')],
  ];
  return htmlPage({
    title: `hardwire flags prove ${r.component} ${r.kubernetesVersion}`,
    style: STYLE,
    script: SORT_SCRIPT,
    body: `<h1>flags prove: ${esc(r.component)}</h1>
<p id="summary">${esc(summary(r))}</p>
<dl id="run">${run.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}</dl>
<h2>Flags</h2>
<table class="sortable" id="flags"><thead><tr><th>flag</th><th>verdict</th><th>site</th><th>hits</th><th>function delve stopped in</th><th>value seen / reason</th></tr></thead>
<tbody>
${flags}
</tbody></table>
<h2>Cited read sites</h2>
<table class="sortable" id="sites"><thead><tr><th>flag</th><th>cited site</th><th>status</th><th>hits</th><th>value seen / reason</th></tr></thead>
<tbody>
${sites}
</tbody></table>${translated}`,
  });
}
