// The k0s half of kill-one as Markdown, with the module 3.6 contrast: hardwire's SIGKILL of
// kube-apiserver (figures from the hardwire half's runs, quoted with where they come from) beside
// this run's SIGKILL of k0s (measured now).
import { journalSection, timelineSection } from './report.ts';
import type { KillK0sReport } from './kill-k0s.ts';

/** Measured by test/drill-mistakes.test.ts (two runs) and once by hand, 2026-12-01; README "Drills". */
export const HARDWIRE_HALF = {
  source:
    '`hardwire drill kill-one --host node1` on a wired 2-host lab, 2026-12-01 (README, Drills: two test runs and one by hand)',
  wentDown:
    'kube-apiserver on node1 (its unit activating 5.0 s, /readyz failing 11.6–14.2 s) and the kube-controller-manager leader on node1 (lost its Lease, exited, restarted; Lease stale 3 s)',
  kept: "etcd, node2's kube-apiserver",
  restartedBy:
    'systemd, per unit (Restart=on-failure, RestartSec=5; NRestarts 0 -> 1 for kube-apiserver)',
  allBack: '16.7–19.4 s (10.4 s by hand)',
};

const s1 = (ms: number | null) => (ms === null ? '-' : `${(ms / 1000).toFixed(1)} s`);
const since = (r: KillK0sReport, at: string | null) =>
  at ? s1(Date.parse(at) - Date.parse(r.broken.at)) : '-';

export function killK0sMarkdown(r: KillK0sReport): string {
  const down = r.outages;
  const kids = r.children;
  return [
    `# Kill one process (module 3.6), k0s half: SIGKILL the k0s controller`,
    '',
    `- Lab "${r.lab}", ${r.host.name} (${r.host.address}), k0s ${r.k0sVersion}, one controller with default components`,
    `- ${r.unitSettings.FragmentPath ?? 'k0scontroller.service'}: Restart=${r.unitSettings.Restart}, RestartUSec=${r.unitSettings.RestartUSec}, KillMode=${r.unitSettings.KillMode}, Delegate=${r.unitSettings.Delegate}`,
    `- Baseline: ${r.baseline.samples} samples of ${r.baseline.probes.length} probes, every one ok; k0s MainPID ${r.baseline.mainPid}, children ${r.baseline.children.map((c) => `${c.name} ${c.pid}`).join(', ')}`,
    `- Broken: ${r.broken.action} at ${r.broken.at}`,
    `- k0s restarted by ${r.k0sRestart.by}; new MainPID ${r.k0sRestart.newMainPid ?? 'none'}, first seen ${s1(r.k0sRestart.newMainSeenAfterMs)} after the kill`,
    ...r.k0sRestart.exits
      .slice(1)
      .map(
        (x) =>
          `- k0s exited again +${since(r, x.exit.at)}: \`${x.exit.line}\`; its last error: \`${x.cause?.line.slice(0, 240) ?? '(none found)'}\` (systemd restarted it once more)`,
      ),
    `- Every probe ok again ${r.allBackMs === null ? 'never, within the sampling' : `${s1(r.allBackMs)} after the kill`}; /readyz at the end: ${r.final.readyz}; every child under the new MainPID ${r.final.mainPid}: ${r.final.everyChildUnderNewMain ? 'yes' : 'NO'}`,
    `- Lab ${r.keptLab ? 'kept' : 'torn down'}`,
    '',
    ...journalSection(
      "systemd (PID 1) logs the kill in the unit's journal; systemd is not a Go module, so the line has no source citation.",
      r.captured,
      [],
      '(the kill was not found in the journal)',
    ),
    `Time to detect (kill to that line): ${s1(r.timeToDetectMs)}.`,
    '',
    'Then, in the same journal: systemd schedules the restart, and the new k0s starts a supervisor per child:',
    '',
    ...[...(r.restartLine ? [r.restartLine] : []), ...r.supervised].map(
      (l) => `- +${since(r, l.at)} \`${l.line.slice(0, 200)}\``,
    ),
    '',
    '## What went down, sampled once a second',
    '',
    `${r.samples} samples after the kill.`,
    '',
    '| probe | component | down at (after the kill) | back at | down for | first failure |',
    '|---|---|---|---|---|---|',
    ...down.map(
      (o) =>
        `| ${o.probe} | ${o.component} | ${since(r, o.downAt)} | ${o.upAt ? since(r, o.upAt) : 'still down'} | ${s1(o.downMs)} | ${o.firstDetail.slice(0, 120).replaceAll('|', '\\|')} |`,
    ),
    ...(down.length ? [] : ['| (nothing) | | | | | |']),
    '',
    '## What became of each child, and who brought it back',
    '',
    '| child | pid before | right after the kill | gone by | "Starting to supervise" | replaced by | parent of the new one | without a process |',
    '|---|---|---|---|---|---|---|---|',
    ...kids.map(
      (c) =>
        `| ${c.name} | ${c.before?.pid ?? '-'} | ${c.afterKill ? (c.afterKill.running ? `running, parent ${c.afterKill.ppid}` : 'gone') : '-'} | ${since(r, c.goneBy)} | ${since(r, c.supervisorStarted)} | ${c.replacement ? `pid ${c.replacement.pid} at ${since(r, c.replacement.at)}` : 'nothing'} | ${c.replacement ? `${c.replacement.ppid}${c.replacement.underNewMain ? ' (the new k0s)' : ' (NOT the new k0s)'}` : '-'} | ${s1(c.absentMs)} |`,
    ),
    '',
    ...kids.map((c) => `- ${c.name}: ${c.fate}`),
    '',
    'An orphan keeps running until it writes a log line: k0s piped its stdout and stderr into its own log, and that reader is gone. The new k0s terminates the process named in each old PID file just before it starts that supervisor. (The drill reads PIDs, parents and the journal; it does not trace signals. README has an strace of both.)',
    '',
    ...(r.sources.length
      ? [
          'The source lines behind that (pinned k0s source, Go toolchain):',
          '',
          ...r.sources.map(
            (x) =>
              `- [${x.file.includes('@') ? x.file : `${x.file}:${x.line}`}](${x.url}) \`${x.text}\``,
          ),
          '',
        ]
      : []),
    '## Kill one process: hardwire vs k0s',
    '',
    '| | hardwire: SIGKILL kube-apiserver | k0s: SIGKILL k0s controller (this run) |',
    '|---|---|---|',
    `| went down | ${HARDWIRE_HALF.wentDown} | ${r.wentDown.join(', ') || 'nothing'} |`,
    `| down for | see left | ${down.map((o) => `${o.probe} ${s1(o.downMs)}`).join('; ') || '-'} |`,
    `| restarted by | ${HARDWIRE_HALF.restartedBy} | k0s by ${r.k0sRestart.by}; every child by the new k0s's supervisor (none by systemd) |`,
    `| never failed a sample | ${HARDWIRE_HALF.kept} | ${r.baseline.probes.filter((p) => !down.some((o) => o.probe === p)).join(', ') || 'nothing'} |`,
    `| processes replaced | kube-apiserver, kube-controller-manager on node1 | ${['k0s controller', ...kids.filter((c) => c.replacement).map((c) => c.name)].join(', ')}${kids.every((c) => c.replacement) ? ' (every child has a new PID)' : ''} |`,
    `| every probe ok again after | ${HARDWIRE_HALF.allBack} | ${s1(r.allBackMs)} |`,
    '',
    `Hardwire figures: ${HARDWIRE_HALF.source}.`,
    '',
    ...timelineSection(r.timeline),
  ].join('\n');
}
