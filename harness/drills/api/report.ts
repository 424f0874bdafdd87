// The report of an API drill (3.C1-3.C3): --json is this document, --md its Markdown. The
// recovery and timeline sections are the ones 3.C5 prints (drills/report.ts).
import { recoverySection, timelineSection, type GateResult, type RecoveryStep } from '../report.ts';
import type { TimelineEntry } from '../timeline.ts';
import type { Trace } from '../trace.ts';
import type { KubectlRun } from './common.ts';

export interface CapturedLine {
  /** journal: the apiserver's journal; webhook-server: the drill server's own log; audit-log: the apiserver's audit log file. */
  /** response: the body of an HTTP response the drill received. */
  source: 'journal' | 'webhook-server' | 'audit-log' | 'response';
  host?: string;
  unit?: string;
  file?: string;
  at: string;
  line: string;
  /** Where the line comes from in the pinned source (drills/trace.ts), log call first. */
  traces: Trace[];
}

/** A kubectl run and whether it did what the drill says it does (fail during the break, or work). */
export interface Probe extends KubectlRun {
  what: string;
  expect: 'fails' | 'works';
  asExpected: boolean;
}

export interface ApiDrillReport {
  drill: string;
  title: string;
  baseline: { at: string; gates: GateResult[] };
  broke: { at: string; action: string };
  captured: CapturedLine[];
  symptoms: Probe[];
  stillWorks: Probe[];
  recovery: RecoveryStep[];
  recovered: boolean;
  finalGates: GateResult[];
  timeToDetectMs: number | null;
  timeToRecoverMs: number | null;
  keptBroken: boolean;
  /** What to run to recover by hand (printed with --keep-broken). */
  recoverCommand: string;
  details: Record<string, unknown>;
  timeline: TimelineEntry[];
}

/**
 * The first expectation the drill did not meet, as one line, or undefined when it met them all:
 * something captured, every symptom as expected, and (unless kept broken) recovered with every
 * final gate green. The CLI's exit status and its last line come from this one function.
 */
export function unmet(r: ApiDrillReport): string | undefined {
  if (r.captured.length === 0)
    return 'nothing was captured: no log line or response showed the failure';
  if (r.symptoms.length === 0) return 'no symptom was probed';
  const bad = r.symptoms.find((s) => !s.asExpected);
  if (bad) return `symptom not as expected: ${bad.what} (\`${bad.command}\` exited ${bad.code})`;
  if (r.keptBroken) return undefined;
  if (r.finalGates.length === 0) return 'no final gate ran after the recovery';
  const red = r.finalGates.filter((g) => !g.ok);
  if (red.length)
    return `final gates not green after the recovery: ${red.map((g) => g.name).join(', ')}`;
  if (!r.recovered)
    return `not recovered: ${r.recovery.at(-1)?.step ?? 'no recovery step completed'}`;
  return undefined;
}

export function probe(r: KubectlRun, what: string, expect: 'fails' | 'works'): Probe {
  return { ...r, what, expect, asExpected: expect === 'works' ? r.code === 0 : r.code !== 0 };
}

const trim = (l: string, n = 400) => (l.length > n ? `${l.slice(0, n)}…` : l);
const secs = (ms: number | null) => (ms === null ? 'n/a' : `${(ms / 1000).toFixed(1)} s`);

function probeLines(ps: Probe[]): string[] {
  return ps.map(
    (p) =>
      `- ${p.asExpected ? 'as expected' : 'NOT as expected'} (${p.expect}): ${p.what}\n\n  \`\`\`\n  $ ${p.command}   # exit ${p.code}, ${p.ms} ms\n  ${trim(p.output, 600).replace(/\n/g, '\n  ')}\n  \`\`\``,
  );
}

export function apiDrillMarkdown(r: ApiDrillReport): string {
  return [
    `# Drill ${r.drill}: ${r.title}`,
    '',
    `- Broken at ${r.broke.at}: ${r.broke.action}`,
    `- Time to detect: ${secs(r.timeToDetectMs)}; time to recover: ${r.keptBroken ? 'not recovered (--keep-broken)' : secs(r.timeToRecoverMs)}; recovered: ${r.keptBroken ? 'no, kept broken' : r.recovered ? 'yes' : 'NO'}`,
    ...(r.keptBroken ? [`- Recover with: \`${r.recoverCommand}\``] : []),
    '',
    '## Captured',
    '',
    ...(r.captured.length
      ? r.captured.map((c) =>
          [
            `- ${c.at} ${c.source}${c.host ? ` ${c.host}` : ''}${c.unit ? ` ${c.unit}` : ''}${c.file ? ` ${c.file}` : ''}`,
            '',
            '  ```',
            `  ${trim(c.line)}`,
            '  ```',
            ...c.traces.map((x) => `  - emitted at \`${x.citation}\`: ${x.what ?? x.format}`),
          ].join('\n'),
        )
      : ['(nothing captured)']),
    '',
    '## Symptom (kubectl, during the break)',
    '',
    ...probeLines(r.symptoms),
    '',
    '## Still working (blast radius)',
    '',
    ...probeLines(r.stillWorks),
    '',
    ...(r.keptBroken ? [] : recoverySection(r.recovery)),
    '## Final gates',
    '',
    ...r.finalGates.map((g) => `- ${g.ok ? 'ok' : 'FAIL'} ${g.name}`),
    '',
    '## Details',
    '',
    '```json',
    JSON.stringify(r.details, null, 2),
    '```',
    '',
    ...timelineSection(r.timeline),
  ].join('\n');
}
