// The report of a drill run by drills/runner.ts (the --json document) and its Markdown, built from
// 3.C5's sections (journal, recovery, timeline) plus the source citations and the blast radius.
import type { JournalLine } from './journal.ts';
import type { GateResult, RecoveryStep } from './report.ts';
import { journalSection, recoverySection, timelineSection } from './report.ts';
import type { TimelineEntry } from './timeline.ts';
import type { Trace } from './trace.ts';

/** One thing probed after the break: still working or not. */
export interface BlastItem {
  what: string;
  ok: boolean;
  detail: string;
}

export interface TracedLine extends JournalLine {
  traces: Trace[];
}

export interface DrillRun {
  drill: string;
  title: string;
  startedAt: string;
  baseline: {
    at: string;
    gates: GateResult[];
    caSha256: { host: string; path: string; sha256: string | null }[];
  };
  broken: { hosts: string[]; action: string; at: string; files: string[] };
  whoLogs: string;
  /** The first line naming the failure, per host and unit, in the order logged. */
  captured: TracedLine[];
  also: { label: string; lines: TracedLine[] }[];
  symptom: { command: string; code: number; output: string; at: string } | null;
  blastRadius: BlastItem[];
  /** Drill-specific measurements (3.C4's reconcile times, the sampler's outages). */
  details: Record<string, unknown>;
  md: string[];
  keptBroken?: { recoveryCommand: string };
  recovery: RecoveryStep[];
  recovered: boolean;
  finalGates: GateResult[];
  caSha256After: { host: string; path: string; sha256: string | null }[];
  caUnchanged: boolean | null;
  /** From the break to the first captured line's journal timestamp. */
  timeToDetectMs: number | null;
  symptomAfterMs: number | null;
  /** From the start of the recovery to every gate green. */
  timeToRecoverMs: number | null;
  timeline: TimelineEntry[];
}

const secs = (ms: number | null) => (ms === null ? 'n/a' : `${(ms / 1000).toFixed(1)} s`);

export function sourcesSection(lines: TracedLine[]): string[] {
  const seen = new Set<string>();
  const rows = lines
    .flatMap((l) => l.traces)
    .filter((t) => !seen.has(t.citation) && seen.add(t.citation));
  return [
    '## Where the captured lines come from',
    '',
    ...(rows.length
      ? rows.map(
          (t) =>
            `- \`${t.citation}\` (${t.kind}${t.klogHeaderAgrees === undefined ? '' : t.klogHeaderAgrees ? ', klog header agrees' : ', klog header DISAGREES'}): \`${t.format}\``,
        )
      : ['(no catalogued message in the captured lines; see drills/trace.ts)']),
    '',
  ];
}

export function runMarkdown(r: DrillRun): string {
  const allLines = [...r.captured, ...r.also.flatMap((a) => a.lines)];
  return [
    `# ${r.title}`,
    '',
    `- Broken: ${r.broken.action} (${r.broken.hosts.join(', ')}) at ${r.broken.at}`,
    `- Time to detect: ${secs(r.timeToDetectMs)} (first line naming it); symptom after ${secs(r.symptomAfterMs)}; time to recover: ${secs(r.timeToRecoverMs)}; recovered: ${r.keptBroken ? 'not yet (kept broken)' : r.recovered ? 'yes' : 'NO'}`,
    ...(r.caUnchanged === null
      ? []
      : [`- ca.crt sha256 on the hosts: ${r.caUnchanged ? 'unchanged' : 'CHANGED'}`]),
    ...(r.keptBroken
      ? ['', `Kept broken. Recover with:`, '', '```sh', r.keptBroken.recoveryCommand, '```']
      : []),
    '',
    ...journalSection(r.whoLogs, r.captured, [], '(no line naming the failure was found)'),
    ...r.also.flatMap((a) => [
      `### ${a.label}`,
      '',
      ...(a.lines.length
        ? a.lines.map(
            (l) =>
              `- ${l.at} ${l.host} ${l.unit}: \`${l.line.length > 300 ? `${l.line.slice(0, 300)}…` : l.line}\``,
          )
        : ['(none)']),
      '',
    ]),
    ...sourcesSection(allLines),
    '## Symptom (kubectl)',
    '',
    ...(r.symptom
      ? [
          `${r.symptom.at}, exit ${r.symptom.code}:`,
          '',
          '```',
          `$ ${r.symptom.command}`,
          r.symptom.output,
          '```',
        ]
      : ['(not observed)']),
    '',
    '## What kept working (blast radius)',
    '',
    ...r.blastRadius.map((x) => `- ${x.ok ? 'ok' : 'DOWN'} ${x.what}: ${x.detail}`),
    '',
    ...r.md,
    ...(r.keptBroken
      ? []
      : [
          ...recoverySection(r.recovery),
          '## Final gates',
          '',
          ...r.finalGates.map((g) => `- ${g.ok ? 'ok' : 'FAIL'} ${g.name}`),
          '',
        ]),
    ...timelineSection(r.timeline),
  ].join('\n');
}
