// "Upgrade to <version>" as terminal text, Markdown and HTML, from the same rows (upgrade-section.ts).
import { esc } from '../../lib/html.ts';
import type { Finding, UpgradeSection } from './upgrade-section.ts';
import { mdCell as md } from '../../lib/markdown.ts';

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export const title = (u: UpgradeSection) => `Upgrade to ${u.to}`;

/** One line per kubeadm run: its command line, exit status and time, or why it did not run. */
export function kubeadmRuns(u: UpgradeSection): string[] {
  if ('none' in u.kubeadm) return [`kubeadm: no upgrade plan: ${u.kubeadm.none}`];
  const k = u.kubeadm;
  return [
    `kubeadm ${k.version || '(version unknown)'} at ${k.binary}`,
    ...[k.text, k.json].map(
      (r) =>
        `\`${r.argv.join(' ')}\`: exit ${r.exitCode} in ${secs(r.ms)}${r.exitCode !== 0 ? `: ${(r.stderr || r.stdout).trim().split('\n').slice(-2).join(' ')}` : ''}`,
    ),
  ];
}

function hardwireLine(u: UpgradeSection): string {
  if ('none' in u.hardwire) return `hardwire: no plan: ${u.hardwire.none}`;
  const live = u.hardwire.live;
  return `hardwire upgrade plan ${u.hardwire.from} → ${u.hardwire.to}: ${u.hardwire.blocking} blocking; live checks: ${!live ? 'not run' : live.checked ? `verify's ${live.gatesPassed ?? 0} gates passed` : live.skipped}`;
}

export function findingCells(f: Finding): string[] {
  return [
    f.plane === 'hardwire' ? "hardwire's units" : "kubeadm's manifests",
    f.component,
    f.kind,
    f.name,
    `${f.status}${f.blocking ? ' (blocking)' : ''}`,
    f.from ?? '(not registered)',
    f.to ?? '(gone)',
    f.kubeadmSays === null ? 'nothing' : `"${f.kubeadmSays}"`,
  ];
}
export const FINDING_HEAD = [
  'whose flags',
  'component',
  'kind',
  'name',
  'hardwire says',
  'at (from)',
  'at (to)',
  "kubeadm's output says",
];
export const COMPONENT_HEAD = [
  'component',
  'kubeadm upgrade plan says',
  "hardwire: its plane's units",
  "hardwire: kubeadm's manifests",
];

export function upgradeSummary(u: UpgradeSection | undefined): string[] {
  if (!u) return [];
  const out = [
    '',
    `${title(u)}: the real kubeadm upgrade plan beside hardwire's plan`,
    ...kubeadmRuns(u).map((l) => `  ${l}`),
    `  ${hardwireLine(u)}`,
  ];
  for (const c of u.components) {
    out.push(`  ${c.component}: kubeadm: ${c.kubeadm.join('; ') || 'nothing'}`);
    if (c.hardwire) out.push(`    hardwire (its units): ${c.hardwire}`);
    if (c.kubeadmFlags) out.push(`    hardwire (kubeadm's manifests): ${c.kubeadmFlags}`);
  }
  out.push(
    `  hardwire's findings: ${u.findings.length}; kubeadm says nothing about ${u.silent} of them`,
  );
  for (const f of u.findings)
    out.push(
      `    ${f.kubeadmSays === null ? '∅' : '✓'} ${f.plane} ${f.component} ${f.kind} ${f.name}: ${f.status}${f.blocking ? ' (blocking)' : ''}; kubeadm: ${f.kubeadmSays ?? 'nothing'}`,
    );
  out.push(`  ${u.unchecked}`);
  return out;
}

export function upgradeMarkdown(u: UpgradeSection | undefined): string[] {
  if (!u) return [];
  const out = [
    `## ${title(u)}`,
    '',
    ...kubeadmRuns(u).map((l) => `- ${md(l)}`),
    `- ${md(hardwireLine(u))}`,
  ];
  if (!('none' in u.kubeadm))
    out.push(
      '',
      "Why kubeadm's command line is only the version:",
      '',
      ...u.kubeadm.why.map((w) => `- ${md(w)}`),
    );
  out.push(
    '',
    `| ${COMPONENT_HEAD.join(' | ')} |`,
    `|${COMPONENT_HEAD.map(() => '---').join('|')}|`,
  );
  for (const c of u.components)
    out.push(
      `| ${c.component} | ${md(c.kubeadm.join('; ') || 'nothing')} | ${md(c.hardwire || '—')} | ${md(c.kubeadmFlags || '—')} |`,
    );
  out.push(
    '',
    `### What hardwire finds, and what kubeadm's output says about it (nothing about ${u.silent} of ${u.findings.length})`,
    '',
  );
  if (u.findings.length === 0)
    out.push('hardwire finds nothing that is not unchanged at the target.');
  else {
    out.push(`| ${FINDING_HEAD.join(' | ')} |`, `|${FINDING_HEAD.map(() => '---').join('|')}|`);
    for (const f of u.findings) out.push(`| ${findingCells(f).map(md).join(' | ')} |`);
  }
  out.push('', md(u.unchecked), '');
  if (!('none' in u.kubeadm))
    out.push(
      '<details><summary><code>kubeadm upgrade plan</code> as printed</summary>',
      '',
      '```',
      `${u.kubeadm.text.stdout}${u.kubeadm.text.stderr}`.trim(),
      '```',
      '',
      '</details>',
      '',
    );
  return out;
}

export function upgradeHtml(u: UpgradeSection | undefined): string {
  if (!u) return '';
  const td = (s: string) => `<td>${esc(s)}</td>`;
  const comps = u.components
    .map(
      (c) =>
        `<tr data-component="${esc(c.component)}">${td(c.component)}<td>${c.kubeadm.map((l) => `<div>${esc(l)}</div>`).join('') || 'nothing'}</td>${td(c.hardwire || '—')}${td(c.kubeadmFlags || '—')}</tr>`,
    )
    .join('');
  const finds = u.findings
    .map(
      (f) =>
        `<tr class="${f.kubeadmSays === null ? 'differs' : 'same'}" data-name="${esc(f.name)}" data-said="${f.kubeadmSays === null ? 'no' : 'yes'}">${findingCells(f).map(td).join('')}</tr>`,
    )
    .join('');
  const head = (h: string[]) =>
    `<thead><tr>${h.map((x) => `<th>${esc(x)}</th>`).join('')}</tr></thead>`;
  const raw =
    'none' in u.kubeadm
      ? ''
      : `<details><summary>kubeadm upgrade plan as printed</summary><pre id="upgrade-kubeadm-output">${esc(`${u.kubeadm.text.stdout}${u.kubeadm.text.stderr}`.trim())}</pre></details>`;
  return `<section id="upgrade"><h2>${esc(title(u))}</h2>
${kubeadmRuns(u)
  .map((l) => `<p>${esc(l)}</p>`)
  .join('')}<p>${esc(hardwireLine(u))}</p>
${'none' in u.kubeadm ? '' : `<ul>${u.kubeadm.why.map((w) => `<li>${esc(w)}</li>`).join('')}</ul>`}
<table class="sortable" id="upgrade-components">${head(COMPONENT_HEAD)}<tbody>${comps}</tbody></table>
<h3>What hardwire finds, and what kubeadm's output says about it (nothing about ${u.silent} of ${u.findings.length})</h3>
<table class="sortable" id="upgrade-findings">${head(FINDING_HEAD)}<tbody>${finds}</tbody></table>
<p>${esc(u.unchecked)}</p>${raw}</section>`;
}
