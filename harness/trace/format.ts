// The trace as text (one line per stage) and as Markdown (a table, each stage linked to its line
// at the tag; the curriculum's nine in bold).
import type { TraceReport } from './index.ts';
import type { Stage } from './stages.ts';

/** Delve's function name without its package path: filters.WithAuthentication.func1. */
export const shortName = (fn: string): string => fn.slice(fn.lastIndexOf('/') + 1);

export function objectName(r: TraceReport): string {
  return `${r.object.kind} ${r.object.namespace ? `${r.object.namespace}/` : ''}${r.object.name}`;
}

export function summary(r: TraceReport): string {
  const seen = r.curriculum.filter((c) => c.stage !== undefined).length;
  return `kubectl apply of ${objectName(r)} through a debug kube-apiserver ${r.kubernetesVersion} under delve ${r.dlv.version} on ${r.host}, ${r.date}: ` +
    `${r.stages.length} stages from ${r.hits.length} stops at ${r.sinks.length} sinks; ${seen} of the curriculum's ${r.curriculum.length} stages seen; ` +
    `traced in ${r.seconds.traced.toFixed(0)} s (debug apiserver start ${r.seconds.startup.toFixed(0)} s, in all ${r.seconds.total.toFixed(0)} s)`;
}

export function curriculumLine(r: TraceReport): string {
  return r.curriculum.map((c) => `${c.name} ${c.stage === undefined ? '(not seen)' : `#${c.stage}`}`).join(' → ');
}

export function formatText(r: TraceReport): string {
  const w = Math.max(...r.stages.map((s) => s.ref.length));
  const line = (s: Stage) => `${String(s.n).padStart(3)} ${(s.curriculum ?? '').padEnd(20)} ${s.ref.padEnd(w)}  ${shortName(s.function)}  [g${s.goroutine}]`;
  return `${r.stages.map(line).join('\n')}\n\n${curriculumLine(r)}\n${summary(r)}\n`;
}

export function formatMarkdown(r: TraceReport): string {
  const cell = (t: string) => t.replace(/\|/g, '\\|');
  const out = [`# trace apply: ${objectName(r)}`, '', summary(r), '', `The curriculum's stages: ${curriculumLine(r)}`, '',
    `Stops (breakpoints) at: ${r.sinks.map((s) => `\`${shortName(s.function)}\``).join(', ')}. Every other stage is a frame of the stacks delve returned there.`, '',
    '| # | curriculum | function | file:line at the tag | goroutine |', '|---|---|---|---|---|'];
  for (const s of r.stages) {
    const at = s.url ? `[${s.ref}](${s.url})` : s.ref;
    const fn = `\`${cell(shortName(s.function))}\``;
    out.push(`| ${s.n} | ${s.curriculum ? `**${s.curriculum}**` : ''} | ${s.curriculum ? `**${fn}**` : fn} | ${at} | ${s.goroutine} |`);
  }
  return `${out.join('\n')}\n`;
}
