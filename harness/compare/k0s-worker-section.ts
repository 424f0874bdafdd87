// The k0s worker in the report (planes/k0s/worker.ts): how it joined, how long to Ready and to a
// Running Pod, kube-proxy and CoreDNS on it, and its process tree as read from /proc.
import type { K0sModel } from '../planes/types.ts';
import { esc } from '../../lib/html.ts';
import { mdCell as md } from '../../lib/markdown.ts';

type Worker = NonNullable<K0sModel['worker']>;

export function workerFacts(w: Worker): [string, string][] {
  return [
    [
      'controller',
      `${w.controller.host} (${w.controller.address}), --disable-components=${w.controller.disabled.join(',')}`,
    ],
    ['worker', `${w.node} (${w.address}), Pod range ${w.podRange}`],
    ['joined with', w.install.join(' ')],
    ['Node Ready', `${(w.readyMs / 1000).toFixed(1)} s after systemctl start ${w.tree.unit}`],
    [
      'first Pod Running',
      `${w.pod.name} (${w.pod.image}) on ${w.pod.node}, ${w.pod.ip}, ${(w.podMs / 1000).toFixed(1)} s after the start`,
    ],
    [
      'kube-proxy and CoreDNS',
      w.addons.map((a) => `${a.name} ${a.phase}${a.ready ? ' ready' : ''} (${a.image})`).join('; '),
    ],
    ['images in containerd', w.images.join(', ')],
    [
      'pulled from a registry',
      w.pulls.length === 0 ? "nothing (no PullImage in containerd's log)" : w.pulls.join(' / '),
    ],
  ];
}

/** The tree as rows: pid, ppid, depth-indented argv. */
export function treeRows(w: Worker): string[][] {
  const depth = new Map<number, number>();
  return w.tree.procs.map((p) => {
    const d = (depth.get(p.ppid) ?? -1) + 1;
    depth.set(p.pid, d);
    return [String(p.pid), String(p.ppid), `${'  '.repeat(d)}${p.argv.join(' ')}`];
  });
}

export function workerMarkdown(w: Worker | undefined): string[] {
  if (!w) return [];
  const out = [
    '### The k0s worker',
    '',
    '| | |',
    '|---|---|',
    ...workerFacts(w).map(([k, v]) => `| ${k} | ${md(v)} |`),
    '',
  ];
  out.push(
    `Its process tree (${w.tree.unit}, main PID ${w.tree.mainPid}, and each containerd shim), from /proc:`,
    '',
    '| pid | ppid | argv |',
    '|---|---|---|',
  );
  for (const r of treeRows(w)) out.push(`| ${r[0]} | ${r[1]} | \`${md(r[2]!)}\` |`);
  out.push('');
  return out;
}

export function workerHtml(w: Worker | undefined): string {
  if (!w) return '';
  const rows = workerFacts(w)
    .map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(v)}</td></tr>`)
    .join('');
  const tree = treeRows(w)
    .map((r) => `<tr><td>${r[0]}</td><td>${r[1]}</td><td><pre>${esc(r[2]!)}</pre></td></tr>`)
    .join('');
  return `<h3>The k0s worker</h3><table id="k0s-worker"><tbody>${rows}</tbody></table>
<table class="sortable" id="k0s-worker-tree"><thead><tr><th>pid</th><th>ppid</th><th>argv</th></tr></thead><tbody>${tree}</tbody></table>`;
}
