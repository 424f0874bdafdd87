// The part of the report only k0s has: its controllers (single and HA), what runs inside the k0s
// process, and what changes from one controller to three. Markdown and HTML from the same rows.
import type { K0sModel } from '../planes/types.ts';
import type { CompareReport } from './types.ts';
import { esc } from '../../lib/html.ts';
import { workerHtml, workerMarkdown } from './k0s-worker-section.ts';
import { mdCell as md } from '../../lib/markdown.ts';

/** "node1 (single)", "node2 (HA, first)", "node3 (HA, joined)". */
export function topologyHeads(k: K0sModel): string[] {
  let ha = 0;
  return k.controllers.map((c) =>
    c.topology === 'single'
      ? `${c.host} (single)`
      : `${c.host} (HA, ${ha++ === 0 ? 'first' : 'joined'})`,
  );
}

export function controllerRows(k: K0sModel): string[][] {
  return k.controllers.map((c) => [
    c.host,
    c.topology,
    `${(c.readyMs / 1000).toFixed(1)} s`,
    String(c.mainPid),
    c.children.map((p) => `${p.name} (${p.pid})`).join(', '),
  ]);
}

export function inProcessRows(
  k: K0sModel,
): { name: string; where: string; when: string; disable: string; cite: string; url: string }[] {
  const ha = k.controllers.find((c) => c.topology === 'ha');
  return k.components.map((c) => {
    const child = c.process ? ha?.children.find((p) => p.name === c.process) : undefined;
    return {
      name: c.name,
      where: c.process
        ? child
          ? `own process: ${c.process} (pid ${child.pid})`
          : `own process ${c.process} (not running here)`
        : 'inside the k0s process',
      when: c.condition ?? 'always',
      disable: c.disableAs ? `--disable-components=${c.disableAs}` : '',
      cite: `${c.at.file}:${c.at.line}`,
      url: c.at.url,
    };
  });
}

export function k0sMarkdown(r: CompareReport): string[] {
  const k = r.k0s;
  if (!k) return [];
  const out = ['## k0s: controllers, topology and what runs inside k0s', ''];
  out.push(
    '| host | topology | start to /readyz | k0s pid | supervised children (pid) |',
    '|---|---|---|---|---|',
  );
  for (const row of controllerRows(k)) out.push(`| ${row.map(md).join(' | ')} |`);
  out.push('', `\`k0s etcd member-list\` on the first HA controller: \`${md(k.etcdMembers)}\``, '');
  out.push(
    '### Components the k0s controller runs (its source at the tag, checked against the live process tree)',
    '',
  );
  out.push(
    '| component | where it runs | added when | how to turn it off | source |',
    '|---|---|---|---|---|',
  );
  for (const c of inProcessRows(k))
    out.push(
      `| ${md(c.name)} | ${md(c.where)} | \`${md(c.when)}\` | ${md(c.disable)} | [${c.cite}](${c.url}) |`,
    );
  out.push('', `\`--disable-components\` accepts: ${k.disableComponents.join(', ')}.`, '');
  out.push(
    '### From one controller to three: flags that change',
    '',
    "Each controller's own address is written `<own-address>`; every other flag is the same on all four.",
    '',
  );
  const heads = topologyHeads(k);
  out.push(
    `| component | flag | ${heads.join(' | ')} |`,
    `|---|---|${heads.map(() => '---').join('|')}|`,
  );
  for (const [c, rows] of Object.entries(k.haDelta))
    for (const d of rows)
      out.push(`| ${c} | --${d.flag} | ${d.values.map((v) => md(v ?? '—')).join(' | ')} |`);
  out.push('', ...workerMarkdown(k.worker));
  out.push(
    '<details><summary><code>k0s config create</code></summary>',
    '',
    '```yaml',
    k.defaultConfig.trim(),
    '```',
    '',
    '</details>',
    '',
  );
  return out;
}

export function k0sHtml(r: CompareReport): string {
  const k = r.k0s;
  if (!k) return '';
  const table = (head: string[], rows: string[][], id: string) =>
    `<table class="sortable" id="${id}"><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows.map((row) => `<tr>${row.join('')}</tr>`).join('')}</tbody></table>`;
  const td = (s: string) => `<td>${esc(s)}</td>`;
  return `<section id="k0s"><h2>k0s: controllers, topology and what runs inside k0s</h2>
${table(
  ['host', 'topology', 'start to /readyz', 'k0s pid', 'supervised children (pid)'],
  controllerRows(k).map((row) => row.map(td)),
  'k0s-controllers',
)}
<p>k0s etcd member-list: <code>${esc(k.etcdMembers)}</code></p>
<h3>Components the k0s controller runs</h3>
${table(
  ['component', 'where it runs', 'added when', 'how to turn it off', 'source'],
  inProcessRows(k).map((c) => [
    td(c.name),
    td(c.where),
    `<td><code>${esc(c.when)}</code></td>`,
    td(c.disable),
    `<td><a href="${esc(c.url)}">${esc(c.cite)}</a></td>`,
  ]),
  'k0s-components',
)}
<h3>From one controller to three: flags that change</h3>
${table(
  ['component', 'flag', ...topologyHeads(k)],
  Object.entries(k.haDelta).flatMap(([c, rows]) =>
    rows.map((d) => [td(c), td(`--${d.flag}`), ...d.values.map((v) => td(v ?? '—'))]),
  ),
  'k0s-ha-delta',
)}
${workerHtml(k.worker)}
<details><summary>k0s config create</summary><pre>${esc(k.defaultConfig)}</pre></details></section>`;
}
