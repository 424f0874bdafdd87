// The cert-expiry drill's result (the --json document) and its Markdown. The sections that any
// drill has (journal lines, recovery, timeline) are separate functions for the next drills.
import type { CertRow } from '../../core/certs/check.ts';
import type { CaId } from '../../core/pki/table.ts';
import type { Mode, Target } from './cert-expiry-targets.ts';
import type { JournalLine } from './journal.ts';
import type { SymptomKind } from './symptoms.ts';
import type { TimelineEntry } from './timeline.ts';

export interface GateResult {
  name: string;
  ok: boolean;
  detail: string;
}
export interface RecoveryStep {
  step: string;
  why: string;
  at: string;
}
/** A host change made by wire during the recovery, rather than a step the drill explains. */
export const WIRE_ROLL = 'wire roll';

export interface DrillReport {
  target: Target;
  mode: Mode;
  window?: { notBefore: string; notAfter: string };
  baseline: {
    at: string;
    gates: GateResult[];
    caFingerprints: Record<CaId, string>;
    remoteCaFingerprints: { host: string; ca: string; fingerprint: string | undefined }[];
    leases: Record<string, { holder: string; renewTime: string }>;
  };
  broken: {
    hosts: string[];
    files: string[];
    installedAt: string;
    loadedAt: string;
    invalidFrom: string;
    reconnectForced?: { at: string; why: string };
  };
  whoLogs: string;
  captured: JournalLine[];
  related: JournalLine[];
  symptom: { kind: SymptomKind; detail: string; at: string } | null;
  checkAfterBreak: CertRow[];
  recovery: RecoveryStep[];
  recovered: boolean;
  finalGates: GateResult[];
  confirmation: string;
  caFingerprint: { before: string; after: string; ca: CaId; unchanged: boolean };
  caFingerprints: { before: Record<CaId, string>; after: Record<CaId, string> };
  timeToDetectMs: number | null;
  timeToRecoverMs: number;
  timeline: TimelineEntry[];
}

/** Log lines are quoted as captured, trimmed to 400 characters. */
const trim = (l: string) => (l.length > 400 ? `${l.slice(0, 400)}…` : l);
const seconds = (ms: number | null) =>
  ms === null ? 'not detected' : `${(ms / 1000).toFixed(1)} s`;

export function journalSection(
  whoLogs: string,
  captured: JournalLine[],
  related: JournalLine[],
  none: string,
): string[] {
  return [
    '## Captured from the journal',
    '',
    whoLogs,
    '',
    ...(captured.length
      ? captured.map(
          (c) => `- ${c.at} ${c.host} ${c.unit}\n\n  \`\`\`\n  ${trim(c.line)}\n  \`\`\``,
        )
      : [none]),
    ...(related.length
      ? [
          '',
          'Related lines from the component itself:',
          '',
          ...related.map((c) => `- ${c.at} ${c.host} ${c.unit}: \`${trim(c.line)}\``),
        ]
      : []),
    '',
  ];
}

export function recoverySection(steps: RecoveryStep[]): string[] {
  return [
    '## Recovery, in order',
    '',
    ...steps.map(
      (x, i) => `${i + 1}. ${x.at} ${x.step}${x.why === WIRE_ROLL ? '' : ` — ${x.why}`}`,
    ),
    '',
  ];
}

export function timelineSection(entries: TimelineEntry[]): string[] {
  return ['## Timeline', '', ...entries.map((t) => `- ${t.at} ${t.event}`), ''];
}

export function drillMarkdown(r: DrillReport): string {
  return [
    `# Drill 3.C5: expired certificate — ${r.target} (${r.mode})`,
    '',
    `- Broken: ${r.broken.hosts.join(', ')}; cert valid ${r.window?.notBefore} .. ${r.window?.notAfter}; invalid from ${r.broken.invalidFrom}`,
    ...(r.broken.reconnectForced
      ? [`- Reconnect forced at ${r.broken.reconnectForced.at}: ${r.broken.reconnectForced.why}`]
      : []),
    `- Time to detect: ${seconds(r.timeToDetectMs)}; time to recover: ${seconds(r.timeToRecoverMs)}; recovered: ${r.recovered ? 'yes' : 'NO'}`,
    `- CA ${r.caFingerprint.ca} fingerprint before ${r.caFingerprint.before}, after ${r.caFingerprint.after}: ${r.caFingerprint.unchanged ? 'unchanged' : 'CHANGED'}`,
    '',
    ...journalSection(r.whoLogs, r.captured, r.related, '(no x509 line was found)'),
    '## Symptom',
    '',
    r.symptom ? `${r.symptom.at} ${r.symptom.kind}: ${r.symptom.detail}` : '(not observed)',
    '',
    '## certs check after the break',
    '',
    '| host | file | expires | status |',
    '|---|---|---|---|',
    ...r.checkAfterBreak.map(
      (c) => `| ${c.host} | ${c.path} | ${c.notAfter ?? '-'} | ${c.status} |`,
    ),
    '',
    ...recoverySection(r.recovery),
    ...timelineSection(r.timeline),
  ].join('\n');
}
