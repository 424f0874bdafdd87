// The process model per node in the report (issue 23): for each plane, each node's process tree as
// read from its /proc (planes/proc-read.ts), with what runs each process: systemd, k0s, a containerd
// shim, the kubelet. Text (counts), Markdown and HTML (the tree, argv wrapped as the k0s worker's is).
import { PLANES, type PlaneName } from '../planes/plane-names.ts';
import type { HostProcs, ProcNode } from '../planes/proc-tree.ts';
import { esc } from '../../lib/html.ts';
import { mdCell as md } from '../../lib/markdown.ts';

export type NodeProcsSection = Record<PlaneName, HostProcs[] | { none: string }>;

export function buildProcSection(
  planes: Record<PlaneName, { collected: boolean; why: string; nodeProcs?: HostProcs[] }>,
): NodeProcsSection {
  return Object.fromEntries(
    PLANES.map((p) => {
      const d = planes[p];
      if (!d.collected) return [p, { none: `not collected: ${d.why}` }];
      return [p, d.nodeProcs?.length ? d.nodeProcs : { none: 'no host was read' }];
    }),
  ) as NodeProcsSection;
}

/** "kubelet.service, containerd.service" for a host's units; "etcd, kube-apiserver" for k0s's children. */
const names = (h: HostProcs, kind: ProcNode['kind']) =>
  h.procs
    .filter((p) => p.kind === kind)
    .map((p) =>
      kind === 'unit'
        ? p.under.replace(/^systemd unit /, '')
        : (p.argv[0] ?? p.comm).split('/').pop(),
    );

export function hostLine(h: HostProcs): string {
  const k0s = names(h, 'k0s-child');
  return (
    `${h.host} (${h.role}): ${h.procs.length} processes; systemd units ${names(h, 'unit').join(', ')}` +
    `${k0s.length ? `; under k0s ${k0s.join(', ')}` : ''}; ${h.counts.shims} containerd shims, ${h.counts.containers} container processes in ${h.counts.pods} kubelet Pods`
  );
}

export function procSummary(s: NodeProcsSection): string[] {
  const out = ['', "process model per node (from each host's /proc):"];
  for (const p of PLANES) {
    const x = s[p];
    if ('none' in x) out.push(`  ${p}: ${x.none}`);
    else for (const h of x) out.push(`  ${p} ${hostLine(h)}`);
  }
  return out;
}

const argvText = (p: ProcNode) => (p.argv.length ? p.argv.join(' ') : `[${p.comm}]`);

export function procMarkdown(s: NodeProcsSection): string[] {
  const out = [
    '## Process model per node',
    '',
    "Each node's processes as its /proc has them (ppid, comm, argv, cgroup; sshd and its sessions left out), with what runs each.",
    '',
  ];
  for (const p of PLANES) {
    const x = s[p];
    if ('none' in x) {
      out.push(`### ${p}`, '', x.none, '');
      continue;
    }
    for (const h of x) {
      out.push(
        `### ${p}: ${h.host}`,
        '',
        hostLine(h),
        '',
        '| pid | ppid | under | argv |',
        '|---|---|---|---|',
      );
      for (const n of h.procs)
        out.push(
          `| ${n.pid} | ${n.ppid} | ${md(n.under)} | \`${md(`${'  '.repeat(n.depth)}${argvText(n)}`)}\` |`,
        );
      out.push('');
    }
  }
  return out;
}

export function procHtml(s: NodeProcsSection): string {
  const parts = PLANES.map((p) => {
    const x = s[p];
    if ('none' in x)
      return `<section class="node-procs" data-plane="${p}"><h3>${p}</h3><p class="no">${esc(x.none)}</p></section>`;
    return x
      .map(
        (
          h,
        ) => `<section class="node-procs" data-plane="${p}" data-host="${esc(h.host)}"><h3>${p}: ${esc(h.host)}</h3><p>${esc(hostLine(h))}</p>
<table class="proc-tree"><thead><tr><th>pid</th><th>ppid</th><th>under</th><th>argv</th></tr></thead><tbody>${h.procs
          .map(
            (n) =>
              `<tr data-pid="${n.pid}" data-kind="${n.kind}"><td>${n.pid}</td><td>${n.ppid}</td><td class="why">${esc(n.under)}</td><td><pre style="padding-left:${n.depth}em">${esc(argvText(n))}</pre></td></tr>`,
          )
          .join('')}</tbody></table></section>`,
      )
      .join('\n');
  }).join('\n');
  return `<h2 id="node-procs">Process model per node</h2><p>Each node's processes as its /proc has them (ppid, comm, argv, cgroup; sshd and its sessions left out), with what runs each.</p>\n${parts}`;
}
