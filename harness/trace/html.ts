// The trace as one self-contained HTML page: the stages in the order hit, each linked to its line at
// the tag, the curriculum's nine marked, and each goroutine's stages in one colour band. A function
// stays on one line; a citation may wrap after a `/` (lib/html.ts's breakable), so 1400 px holds both.
import type { TraceReport } from './index.ts';
import {
  curriculumLine,
  objectName,
  rejectionLine,
  shortName,
  summary,
  webhookLine,
  capstoneLine,
} from './format.ts';
import { esc, htmlPage, link } from '../../lib/html.ts';

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1400px}
table{border-collapse:collapse;margin:.5em 0 2em;width:100%}
th,td{border:1px solid #ccc;padding:3px 6px;vertical-align:top;text-align:left;font-size:12px}
th{background:#eee}
td.fn,td.cite{font-family:ui-monospace,monospace} td.fn{white-space:nowrap} td.fn wbr{display:none}
tr.curriculum td{background:#dff5dd;font-weight:600}
tr.g1 td.g{border-left:4px solid #7aa6d8} tr.g2 td.g{border-left:4px solid #d8a67a} tr.g3 td.g{border-left:4px solid #8bc28b} tr.g4 td.g{border-left:4px solid #b48bc2}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px} dt{font-weight:600} dd{margin:0;font-family:ui-monospace,monospace;overflow-wrap:anywhere}
`;

export function formatHtml(r: TraceReport): string {
  const gs = [...new Set(r.stages.map((s) => s.goroutine))];
  const rows = r.stages
    .map(
      (s) =>
        `<tr class="${s.curriculum ? 'curriculum ' : ''}g${gs.indexOf(s.goroutine) + 1}" data-n="${s.n}" data-ref="${esc(s.ref)}">` +
        `<td>${s.n}</td><td class="mark">${esc(s.curriculum ?? '')}</td><td class="fn">${esc(shortName(s.function))}</td><td class="cite">${link(s.ref, s.url)}</td><td class="g">${s.goroutine}</td></tr>`,
    )
    .join('\n');
  const run: [string, string][] = [
    ['host', r.host],
    ['date', r.date],
    ['Kubernetes', r.kubernetesVersion],
    ['object', `${objectName(r)} (${r.object.file})`],
    ['kubectl', `${r.kubectl.command}: ${r.kubectl.output}`],
    ['debug binary', `${r.debugBinary.name} sha256 ${r.debugBinary.sha256}`],
    ['delve', `${r.dlv.version} sha256 ${r.dlv.sha256}`],
    ['breakpoints', r.sinks.map((s) => s.function).join(', ')],
    ['argv', r.argv.join(' ')],
  ];
  return htmlPage({
    title: `hardwire trace apply ${objectName(r)} ${r.kubernetesVersion}`,
    style: STYLE,
    body: `<h1>trace apply: ${esc(objectName(r))}</h1>
<p id="summary">${esc(summary(r))}</p>
<p id="curriculum">${esc(curriculumLine(r))}</p>
${r.authz ? `<p id="authz">${esc(rejectionLine(r)!)}; the rejection point: ${link(r.authz.point.ref, r.authz.point.url)}</p>` : ''}
${r.capstone ? `<p id="capstone">${esc(capstoneLine(r)!)}</p><ul id="capstone-calls">${r.capstone.calls.map((x) => `<li data-role="${x.role}">${x.role}: ${link(x.callOut.ref, x.callOut.url)} <code>${esc(shortName(x.callOut.function))}</code></li>`).join('')}</ul>` : ''}
${r.webhook ? `<p id="webhook">${esc(webhookLine(r)!)}</p><ul id="webhook-points">${(['callOut', 'answer', 'rejection'] as const).map((k) => `<li data-point="${k}">${link(r.webhook![k].ref, r.webhook![k].url)} <code>${esc(shortName(r.webhook![k].function))}</code></li>`).join('')}</ul>` : ''}
<dl id="run">${run.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}</dl>
<table id="stages"><thead><tr><th>#</th><th>curriculum</th><th>function</th><th>file:line at the tag</th><th>goroutine</th></tr></thead>
<tbody>
${rows}
</tbody></table>`,
  });
}
