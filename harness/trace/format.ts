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
  return (
    `kubectl apply of ${objectName(r)} through a debug kube-apiserver ${r.kubernetesVersion} under delve ${r.dlv.version} on ${r.host}, ${r.date}: ` +
    `${r.stages.length} stages from ${r.hits.length} stops at ${r.sinks.length} sinks; ${seen} of the curriculum's ${r.curriculum.length} stages seen; ` +
    `traced in ${r.seconds.traced.toFixed(0)} s (debug apiserver start ${r.seconds.startup.toFixed(0)} s, in all ${r.seconds.total.toFixed(0)} s)`
  );
}

export function curriculumLine(r: TraceReport): string {
  return r.curriculum
    .map((c) => `${c.name} ${c.stage === undefined ? '(not seen)' : `#${c.stage}`}`)
    .join(' → ');
}

/** The rejection, in one line: which command was refused, and the frame that called Forbidden. */
export function rejectionLine(r: TraceReport): string | undefined {
  const a = r.authz;
  return a
    ? `as ${a.user}, unbound: ${a.rejected.command} exited ${a.rejected.code}; authorization rejected it at ${a.point.ref} in ${shortName(a.point.function)} ` +
        `(stage ${a.point.n} of ${a.stages.length} on the live stack); bound by ${a.bound.join('; ')}, the apply above was admitted`
    : undefined;
}

/** The webhook's rejection, in one line: where admission called out, where the answer came back, where it became the rejection. */
export function webhookLine(r: TraceReport): string | undefined {
  const w = r.webhook;
  return w
    ? `validating webhook ${w.webhook} (${w.url}) rejected it: ${r.kubectl.command} exited ${r.kubectl.code}; admission called out at ${w.callOut.ref} (stage ${w.callOut.n}), ` +
        `the answer came back at ${w.answer.ref} (stage ${w.answer.n}), and became the rejection at ${w.rejection.ref} in ${shortName(w.rejection.function)} (stage ${w.rejection.n})`
    : undefined;
}

/** The capstone's three webhooks, in one line: where the create called each. */
export function capstoneLine(r: TraceReport): string | undefined {
  const c = r.capstone;
  return c
    ? `through the capstone's three webhooks (${r.kubectl.command} exited ${r.kubectl.code}): ${c.calls
        .map(
          (x) =>
            `${x.role} called at ${x.callOut.ref} in ${shortName(x.callOut.function)} (stage ${x.callOut.n})`,
        )
        .join('; ')}`
    : undefined;
}

/** The webhook's three points as Markdown links, with the server's journal and kubectl's answer. */
function webhookMarkdown(r: TraceReport): string[] {
  const w = r.webhook!;
  const at = (s: Stage) =>
    `${s.url ? `[${s.ref}](${s.url})` : s.ref} in \`${shortName(s.function)}\` (stage ${s.n})`;
  return [
    '',
    `## Rejected by the validating webhook ${w.webhook}`,
    '',
    `\`${r.kubectl.command}\` exited ${r.kubectl.code}: ${r.kubectl.output.replace(/\|/g, '\\|')}`,
    '',
    `- admission calls out: ${at(w.callOut)}`,
    `- the answer comes back: ${at(w.answer)}`,
    `- it becomes the rejection: ${at(w.rejection)}`,
    '',
    `The webhook's own log (journal of its unit on ${r.host}):`,
    '',
    '```',
    ...w.serverLog,
    '```',
  ];
}

export function formatText(r: TraceReport): string {
  const w = Math.max(...r.stages.map((s) => s.ref.length));
  const line = (s: Stage) =>
    `${String(s.n).padStart(3)} ${(s.curriculum ?? '').padEnd(20)} ${s.ref.padEnd(w)}  ${shortName(s.function)}  [g${s.goroutine}]`;
  const rej = [rejectionLine(r), webhookLine(r), capstoneLine(r)]
    .filter((x) => x !== undefined)
    .map((x) => `${x}\n`)
    .join('');
  return `${r.stages.map(line).join('\n')}\n\n${curriculumLine(r)}\n${rej}${summary(r)}\n`;
}

export function formatMarkdown(r: TraceReport): string {
  const cell = (t: string) => t.replace(/\|/g, '\\|');
  const out = [
    `# trace apply: ${objectName(r)}`,
    '',
    summary(r),
    '',
    `The curriculum's stages: ${curriculumLine(r)}`,
    '',
    `Stops (breakpoints) at: ${r.sinks.map((s) => `\`${shortName(s.function)}\``).join(', ')}. Every other stage is a frame of the stacks delve returned there.`,
    '',
    '| # | curriculum | function | file:line at the tag | goroutine |',
    '|---|---|---|---|---|',
  ];
  for (const s of r.stages) {
    const at = s.url ? `[${s.ref}](${s.url})` : s.ref;
    const fn = `\`${cell(shortName(s.function))}\``;
    out.push(
      `| ${s.n} | ${s.curriculum ? `**${s.curriculum}**` : ''} | ${s.curriculum ? `**${fn}**` : fn} | ${at} | ${s.goroutine} |`,
    );
  }
  if (r.authz) {
    const a = r.authz;
    out.push(
      '',
      `## Rejected by authorization (as ${a.user}, no binding), then admitted (bound)`,
      '',
      `\`${a.rejected.command}\` exited ${a.rejected.code}: ${cell(a.rejected.output)}`,
      '',
      `Rejection point, from the live stack at \`${shortName(r.sinks.find((x) => x.id === 'forbidden')!.function)}\`: ${a.point.url ? `[${a.point.ref}](${a.point.url})` : a.point.ref} in \`${shortName(a.point.function)}\`.`,
      '',
      `Bound by: ${a.bound.map((b) => `\`${b}\``).join(', ')}; then the apply traced above was admitted.`,
      '',
      '| # | function | file:line at the tag | goroutine |',
      '|---|---|---|---|',
    );
    for (const s of a.stages)
      out.push(
        `| ${s.n} | \`${cell(shortName(s.function))}\` | ${s.url ? `[${s.ref}](${s.url})` : s.ref} | ${s.goroutine} |`,
      );
  }
  if (r.webhook) out.push(...webhookMarkdown(r));
  if (r.capstone)
    out.push(
      '',
      `## Through the capstone's three webhooks (CRD ${r.capstone.crd}; ${r.capstone.configurations.join(', ')})`,
      '',
      ...r.capstone.calls.map(
        (x) =>
          `- ${x.role}: called at ${x.callOut.url ? `[${x.callOut.ref}](${x.callOut.url})` : x.callOut.ref} in \`${shortName(x.callOut.function)}\` (stage ${x.callOut.n})`,
      ),
    );
  return `${out.join('\n')}\n`;
}
