// The audit report as text, Markdown and one self-contained HTML page, from the same rows.
import { esc, htmlPage, link } from '../../lib/html.ts';
import type { AuditCert, AuditFlag, AuditHost, AuditProcess, AuditReport } from './types.ts';
import { mdCell as md } from '../../lib/markdown.ts';
import { planSections, PLAN_STYLE } from '../../core/upgrade/html.ts';
import { formatMarkdown as planMarkdown } from '../../core/upgrade/format.ts';

/** The plan page's rules for its own tables (rows by status), without its page-wide ones. */
const PLAN_ROWS = PLAN_STYLE.split('\n')
  .filter((l) => l.startsWith('tr.') || l.startsWith('td.name') || l.startsWith('pre'))
  .join('\n');

export const cite = (f: AuditFlag): string =>
  f.status === 'unknown'
    ? 'UNKNOWN: not in the flag map of this binary at this version'
    : f.status === 'unmapped'
      ? 'unmapped'
      : (f.cite ??
        (f.readAt[0]
          ? `read at ${f.readAt[0].ref}`
          : `registered at ${f.registeredAt?.ref ?? '?'}`));

/** A certificate's end date and days left; a file that held no readable certificate has neither. */
const expiry = (c: AuditCert) =>
  c.notAfter ? `${c.notAfter.slice(0, 10)} (${c.daysLeft} d)` : '-';

/** --cis: kube-bench's totals on a host and the checks that FAIL, in one line. */
export function cisLine(h: AuditHost): string | undefined {
  const c = h.cis;
  if (!c) return undefined;
  const fails = c.checks.filter((x) => x.status === 'FAIL').map((x) => x.id);
  return `kube-bench (${c.targets.join(', ')}): ${c.totals.PASS} PASS, ${c.totals.FAIL} FAIL, ${c.totals.WARN} WARN, ${c.totals.INFO} INFO${fails.length ? `; FAIL ${fails.join(', ')}` : ''}`;
}

function counts(rows: AuditFlag[]): string {
  const by = (s: AuditFlag['status']) => rows.filter((r) => r.status === s).length;
  return `${rows.length} (${by('read')} read, ${by('registered')} registered only, ${by('unknown')} unknown${by('unmapped') ? `, ${by('unmapped')} unmapped` : ''})`;
}

/** The one line that sums the report up, last in the text and first in Markdown and HTML. */
function summary(r: AuditReport): string {
  const procs = r.hosts.flatMap((h) => h.processes);
  const flags = procs.flatMap((p) => [...p.flags, ...(p.config?.fields ?? [])]);
  const certs = r.hosts.flatMap((h) => h.certs);
  return `audit: ${r.hosts.length} host(s), ${procs.length} process(es), flags and fields ${counts(flags)}, ${certs.length} certificate(s), ${certs.filter((c) => c.problems.length).length} with problems`;
}

/** The report as text: every flag and field with its site, then the certificates. */
export function formatText(r: AuditReport): string {
  const out: string[] = [];
  for (const h of r.hosts) {
    out.push(`${h.name} (${h.address})${h.reachable ? '' : ': NOT REACHABLE'}`);
    for (const n of h.notes) out.push(`  ${n}`);
    for (const p of h.processes) {
      out.push(
        `  ${p.component} pid ${p.pid} ${p.version ?? 'version unknown'}${p.map ? ` (map ${p.map})` : ''}: flags ${counts(p.flags)}`,
      );
      for (const n of p.notes) out.push(`    note: ${n}`);
      for (const f of p.flags) out.push(`    --${f.name}=${f.value}  ${cite(f)}`);
      if (p.config) {
        out.push(
          `    config ${p.config.path} (${p.config.source}): fields ${counts(p.config.fields)}`,
        );
        for (const f of p.config.fields) out.push(`      ${f.name}: ${f.value}  ${cite(f)}`);
      }
      for (const l of p.lacks ?? [])
        out.push(
          `    lacks ${l.kind === 'flag' ? `--${l.name}` : `config ${l.name}`} (hardwire sets ${l.hardwire}): ${l.why}`,
        );
    }
    if (h.certs.length) out.push(`  certificates (${h.certs.length}):`);
    for (const c of h.certs)
      out.push(
        `    ${c.path} (${c.namedBy}): ${c.subject}; expires ${expiry(c)}; ${c.signedBy ? `signed by ${c.signedBy}` : `issuer ${c.issuer}`}${c.problems.length ? `; ${c.problems.map((x) => x.toUpperCase()).join('; ')}` : ''}`,
      );
    const cis = cisLine(h);
    if (cis) out.push(`  ${cis}`);
  }
  out.push(summary(r));
  for (const p of r.partial) out.push(`partial: ${p}`);
  return `${out.join('\n')}\n`;
}

/** The site a flag's citation names, for a link: its first read, else its registration. */
const url = (f: AuditFlag) => f.readAt[0]?.url ?? f.registeredAt?.url;

const title = (p: AuditProcess) =>
  `${p.component} pid ${p.pid} ${p.version ?? 'version unknown'}${p.map ? ` (map ${p.map})` : ''}`;

const lackName = (l: NonNullable<AuditProcess['lacks']>[number]) =>
  l.kind === 'flag' ? `--${l.name}` : `config ${l.name}`;

export function formatMarkdown(r: AuditReport): string {
  const out = ['# hardwire audit', '', summary(r), ''];
  for (const p of r.partial) out.push(`- partial: ${md(p)}`);
  for (const h of r.hosts) {
    out.push('', `## ${h.name} (${h.address})${h.reachable ? '' : ': not reachable'}`, '');
    for (const n of h.notes) out.push(`${md(n)}`, '');
    for (const p of h.processes) {
      out.push(`### ${title(p)}`, '');
      for (const n of p.notes) out.push(`- note: ${md(n)}`);
      const rows = (label: string, fs: AuditFlag[]) => {
        out.push('', `| ${label} | value | status | where |`, '|---|---|---|---|');
        for (const f of fs) {
          const u = url(f);
          out.push(
            `| ${md(f.name)} | ${md(f.value)} | ${f.status} | ${u ? `[${md(cite(f))}](${u})` : md(cite(f))} |`,
          );
        }
      };
      rows('flag', p.flags);
      if (p.config) rows(`field of ${md(p.config.path)}`, p.config.fields);
      if (p.lacks?.length) {
        out.push('', "| lacks | hardwire sets | hardwire's reason |", '|---|---|---|');
        for (const l of p.lacks)
          out.push(`| ${md(lackName(l))} | ${md(l.hardwire)} | ${md(l.why)} |`);
      }
      out.push('');
    }
    if (h.certs.length) {
      out.push(
        '| certificate | named by | subject | expires | signed by | problems |',
        '|---|---|---|---|---|---|',
      );
      for (const c of h.certs)
        out.push(
          `| ${md(c.path)} | ${md(c.namedBy)} | ${md(c.subject)} | ${expiry(c)} | ${md(c.signedBy ?? `issuer ${c.issuer}`)} | ${md(c.problems.join('; '))} |`,
        );
    }
    const cis = cisLine(h);
    if (cis) out.push('', md(cis));
  }
  // upgrade plan's own Markdown, a heading level down: a section of this report.
  if (r.upgrade) out.push('', planMarkdown(r.upgrade).replace(/^#/gm, '##').trimEnd());
  return `${out.join('\n')}\n`;
}

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:16px;max-width:1400px}
table{border-collapse:collapse;width:100%;margin:8px 0 20px}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top;font-size:12px}
td{font-family:ui-monospace,monospace} td.name{white-space:nowrap} td.name wbr{display:none}
td.why{font-family:system-ui,sans-serif}
tr.unknown td,tr.problem td{background:#fdd} tr.registered td{background:#ffe} tr.unmapped td{background:#eee}
.partial{color:#b00;font-weight:600}`;

function flagTable(label: string, fs: AuditFlag[]): string {
  const rows = fs
    .map(
      (f) =>
        `<tr class="${f.status}" data-flag="${esc(f.name)}"><td class="name">${esc(f.name)}</td><td>${esc(f.value)}</td><td>${f.status}</td><td class="why">${link(cite(f), url(f))}</td></tr>`,
    )
    .join('\n');
  return `<table class="flags"><thead><tr><th>${esc(label)}</th><th>value</th><th>status</th><th>where</th></tr></thead><tbody>\n${rows}\n</tbody></table>`;
}

function hostHtml(h: AuditHost): string {
  const parts = [
    `<section data-host="${esc(h.name)}"><h2>${esc(h.name)} (${esc(h.address)})${h.reachable ? '' : ': <span class="partial">not reachable</span>'}</h2>`,
  ];
  for (const n of h.notes) parts.push(`<p>${esc(n)}</p>`);
  for (const p of h.processes) {
    parts.push(`<h3>${esc(title(p))}</h3>`);
    for (const n of p.notes) parts.push(`<p class="why">note: ${esc(n)}</p>`);
    parts.push(flagTable('flag', p.flags));
    if (p.config) parts.push(flagTable(`field of ${p.config.path}`, p.config.fields));
    if (p.lacks?.length)
      parts.push(
        `<table class="lacks"><thead><tr><th>lacks</th><th>hardwire sets</th><th>hardwire's reason</th></tr></thead><tbody>${p.lacks
          .map(
            (l) =>
              `<tr data-n="${esc(l.name)}"><td class="name">${esc(lackName(l))}</td><td>${esc(l.hardwire)}</td><td class="why">${esc(l.why)}</td></tr>`,
          )
          .join('\n')}</tbody></table>`,
      );
  }
  if (h.certs.length)
    parts.push(
      `<table class="certs"><thead><tr><th>certificate</th><th>named by</th><th>subject</th><th>expires</th><th>signed by</th><th>problems</th></tr></thead><tbody>${h.certs
        .map(
          (c) =>
            `<tr${c.problems.length ? ' class="problem"' : ''} data-n="${esc(c.path)}"><td>${esc(c.path)}</td><td>${esc(c.namedBy)}</td><td>${esc(c.subject)}</td><td>${expiry(c)}</td><td>${esc(c.signedBy ?? `issuer ${c.issuer}`)}</td><td>${esc(c.problems.join('; '))}</td></tr>`,
        )
        .join('\n')}</tbody></table>`,
    );
  const cis = cisLine(h);
  if (cis) parts.push(`<p class="cis">${esc(cis)}</p>`);
  parts.push('</section>');
  return parts.join('\n');
}

export function formatHtml(r: AuditReport): string {
  return htmlPage({
    title: 'hardwire audit',
    style: r.upgrade ? `${STYLE}\n${PLAN_ROWS}` : STYLE,
    body: [
      '<h1>hardwire audit</h1>',
      `<p id="summary">${esc(summary(r))}</p>`,
      ...r.partial.map((p) => `<p class="partial">partial: ${esc(p)}</p>`),
      ...r.hosts.map(hostHtml),
      ...(r.upgrade ? [`<section id="upgrade">${planSections(r.upgrade, 2)}</section>`] : []),
    ].join('\n'),
  });
}
