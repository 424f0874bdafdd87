// Module 3.6, "kill one process", the k0s half: on a fresh 1-host lab running one k0s controller,
// SIGKILL the k0s controller process (MainPID of k0scontroller, `kill -9`, nothing else), sample
// every component once a second through drills/sampler.ts, and report what went down, for how
// long, what became of the children k0s supervises, and who brought them back.
import { join } from 'node:path';
import { processTree, processName } from '../planes/k0s/controller.ts';
import { cacheDir } from '../../lib/paths.ts';
import { StepError } from '../../lib/errors.ts';
import { showUnit } from '../../core/transport/systemctl.ts';
import type { Logger } from '../../lib/log.ts';
import { kubeRequest } from '../../core/transport/kube-api.ts';
import { firstJournalLine, journalLines, type JournalLine } from './journal.ts';
import { outages, sample, type Outage, type Probe, type Sample } from './sampler.ts';
import { Timeline, type TimelineEntry } from './timeline.ts';
import { K0S_UNIT, k0sLabDown, k0sLabUp, type K0sLab } from './k0s-lab.ts';
import { HostWatch, K0S_CHILDREN, etcdClientOf, k0sProbes, type UnitSnap } from './k0s-probes.ts';
import {
  childFates,
  k0sSite,
  newMain,
  type ChildFate,
  type SourceSite,
  type Supervised,
} from './k0s-fates.ts';
import { errText } from './symptoms.ts';
import { GO_VERSION, STD, citation, findFormat } from './trace.ts';

export const DEFAULT_K0S_LAB = 'drill-k0s';

export interface KillK0sOptions {
  lab: string;
  stateDir: string;
  keepLab: boolean;
  observeMs: number;
  baselineMs: number;
}

export interface KillK0sReport {
  drill: 'kill-one';
  plane: 'k0s';
  lab: string;
  host: { name: string; address: string };
  k0sVersion: string;
  /** How systemd runs k0s, read with systemctl show on the host. */
  unitSettings: Record<string, string>;
  bringUp: { step: string; ms: number }[];
  baseline: {
    samples: number;
    probes: string[];
    allOk: boolean;
    mainPid: number;
    children: { name: string; pid: number; ppid: number }[];
  };
  broken: { action: string; at: string; mainPid: number };
  /** The first journal line of k0scontroller naming the failure. */
  captured: JournalLine[];
  /** systemd scheduling the restart, and the new k0s starting each supervisor. */
  restartLine: JournalLine | null;
  supervised: JournalLine[];
  timeToDetectMs: number | null;
  samples: number;
  outages: Outage[];
  wentDown: string[];
  allBackMs: number | null;
  k0sRestart: {
    by: string;
    nRestartsBefore: number;
    nRestartsAfter: number;
    execMainStartBefore: string;
    execMainStartAfter: string;
    newMainPid: number | null;
    newMainSeenAfterMs: number | null;
    exits: K0sExit[];
  };
  children: ChildFate[];
  final: {
    readyz: string;
    mainPid: number;
    children: { name: string; pid: number; ppid: number }[];
    everyChildUnderNewMain: boolean;
  };
  sources: SourceSite[];
  keptLab: boolean;
  ok: boolean;
  timeline: TimelineEntry[];
}

/**
 * Each time k0s's main process ended after the kill, from systemd's line in the unit's journal; the
 * first is the SIGKILL. Any later one is a new k0s that gave up (e.g. an orphan from its PID file did
 * not end within the supervisor's stop timeout while the machine was loaded), with k0s's last error
 * line before it: systemd restarts it again, so NRestarts counts one per exit.
 */
export interface K0sExit {
  exit: JournalLine;
  cause: JournalLine | null;
}

const unitOf = (s: { unit: UnitSnap }) => s.unit;

async function k0sExits(lab: K0sLab, sinceMs: number): Promise<K0sExit[]> {
  const unit = `${K0S_UNIT}.service`;
  const exits = await journalLines(
    lab.session,
    lab.host.name,
    unit,
    'Main process exited',
    sinceMs,
  );
  const errors =
    exits.length > 1
      ? await journalLines(
          lab.session,
          lab.host.name,
          unit,
          'level=(error|fatal)|^Error: ',
          sinceMs,
        )
      : [];
  return exits.map((exit, i) => ({
    exit,
    cause:
      i === 0
        ? null
        : (errors.filter((e) => e.at > exits[i - 1]!.at && e.at <= exit.at).pop() ?? null),
  }));
}

async function unitSettings(lab: K0sLab): Promise<Record<string, string>> {
  return showUnit(
    lab.session,
    K0S_UNIT,
    ['Restart', 'RestartUSec', 'KillMode', 'Delegate', 'FragmentPath'],
    { timeoutMs: 10_000 },
  ) as Promise<Record<string, string>>;
}

async function tree(lab: K0sLab): Promise<{
  mainPid: number;
  children: { name: string; pid: number; ppid: number }[];
  argv: Map<string, string[]>;
}> {
  const t = await processTree(lab.session);
  const kids = t.descendants.filter((d) => d.ppid === t.main.pid);
  return {
    mainPid: t.main.pid,
    children: kids.map((d) => ({ name: processName(d.argv), pid: d.pid, ppid: d.ppid })),
    argv: new Map(kids.map((d) => [processName(d.argv), d.argv])),
  };
}

/**
 * The source lines behind a child's fate, found in the pinned sources when they are on this machine:
 * k0s pipes each child's stdout and stderr into its own log, so an orphan's next log line goes to a
 * pipe with no reader, which Go answers with SIGPIPE on fd 1 and 2; and the new k0s SIGTERMs the
 * process named in the old PID file before it starts a supervisor.
 */
function sources(version: string): SourceSite[] {
  const tree = join(cacheDir(), 'gosrc', `k0s-${version}`);
  const doc = { module: STD, version: GO_VERSION, file: 'os/signal/doc.go' };
  const line = findFormat(doc, 'broken pipe on file descriptors 1 or 2')[0];
  return [
    k0sSite(tree, version, 'pkg/supervisor/supervisor.go', 's.cmd.Stderr = log.NewWriter('),
    ...(line
      ? [
          {
            file: citation({ ...doc, line }),
            line,
            url: `https://github.com/golang/go/blob/${GO_VERSION}/src/${doc.file}#L${line}`,
            text: 'A write to a broken pipe on file descriptors 1 or 2 (standard output or standard error) will cause the program to exit with a SIGPIPE signal',
          },
        ]
      : []),
    k0sSite(tree, version, 'pkg/supervisor/supervisor.go', 's.maybeCleanupPIDFile(ctx)'),
    k0sSite(
      tree,
      version,
      'pkg/supervisor/prochandle_linux.go',
      'syscall.Kill(p.pid, syscall.SIGTERM)',
    ),
    k0sSite(tree, version, 'pkg/supervisor/supervisor.go', 's.log.Info("Starting to supervise")'),
  ].filter((x) => x !== undefined);
}

async function observe(
  lab: K0sLab,
  o: KillK0sOptions,
  timeline: Timeline,
  log: Logger,
): Promise<
  Omit<KillK0sReport, 'keptLab' | 'timeline' | 'bringUp' | 'lab' | 'host' | 'k0sVersion'>
> {
  const s = lab.session;
  const settings = await unitSettings(lab);
  const t0 = await tree(lab);
  const apiserver = t0.argv.get('kube-apiserver');
  if (!apiserver)
    throw new StepError(
      'drill kill-one (k0s)',
      'k0s runs no kube-apiserver child; cannot find its etcd client',
    );
  const watch = new HostWatch(s);
  const probes: Probe[] = k0sProbes(watch, s, lab.creds, etcdClientOf(apiserver), lab.host.name);

  log.step(`Baseline: ${probes.length} probes once a second for ${o.baselineMs / 1000} s`);
  const base = await sample(probes, {
    intervalMs: 1000,
    maxMs: o.baselineMs,
    settleSamples: Number.POSITIVE_INFINITY,
  });
  const bad = probes.flatMap((p) =>
    (base.get(p.name) ?? []).filter((x) => !x.ok).map((x) => `${p.name}: ${x.detail}`),
  );
  if (bad.length)
    throw new StepError('drill kill-one (k0s) baseline', 'not every probe was ok before the kill', {
      host: lab.host.name,
      detail: bad.slice(0, 8),
    });
  const before = unitOf(await watch.current());
  timeline.mark(
    `baseline: every probe ok in ${[...base.values()][0]!.length} samples; k0s MainPID ${before.mainPid}, NRestarts ${before.nRestarts}`,
  );

  log.step(`Break: kill -9 ${before.mainPid} (MainPID of ${K0S_UNIT}) on ${lab.host.name}`);
  const killAt = Date.now();
  await s.exec(['kill', '-9', String(before.mainPid)], { timeoutMs: 10_000 });
  timeline.mark(`broken: kill -9 ${before.mainPid}`);
  const series: Map<string, Sample[]> = await sample(probes, {
    intervalMs: 1000,
    maxMs: o.observeMs,
    settleSamples: 5,
  });
  const down = outages(probes, series);
  const after = unitOf(await watch.current());

  const captured = await firstJournalLine(
    s,
    lab.host.name,
    `${K0S_UNIT}.service`,
    'status=9/KILL',
    killAt - 1000,
  );
  const restartLine = await firstJournalLine(
    s,
    lab.host.name,
    `${K0S_UNIT}.service`,
    'Scheduled restart job',
    killAt - 1000,
  );
  const supervised = await journalLines(
    s,
    lab.host.name,
    `${K0S_UNIT}.service`,
    'Starting to supervise',
    killAt,
  );
  const sup: Supervised[] = supervised.flatMap((l) => {
    const c = /component=(\S+)/.exec(l.line)?.[1];
    return c ? [{ component: c, at: Date.parse(l.at) }] : [];
  });
  const exits = await k0sExits(lab, killAt - 1000);
  const nm = newMain(
    watch.snaps.filter((x) => x.at >= killAt),
    before.mainPid,
  );
  const fates = childFates(
    watch.snaps,
    K0S_CHILDREN,
    killAt,
    before.mainPid,
    nm?.pid ?? 0,
    nm?.at ?? null,
    sup,
  );
  const fin = await tree(lab);
  const readyz = await kubeRequest(lab.creds, 'GET', '/readyz', { timeoutMs: 5000 }).then(
    (r) => `${r.status} ${r.body.trim()}`,
    (e: unknown) => `error: ${errText(e)}`,
  );
  const underNew =
    K0S_CHILDREN.every((n) => fin.children.some((c) => c.name === n && c.ppid === fin.mainPid)) &&
    fin.mainPid !== before.mainPid;
  for (const f of fates)
    timeline.mark(
      `${f.name}: ${f.fate}${f.replacement ? `; new pid ${f.replacement.pid} under ${f.replacement.ppid}` : ''}`,
    );
  const allBackMs = down.every((x) => x.upAt)
    ? Math.max(0, ...down.map((x) => Date.parse(x.upAt!) - killAt))
    : null;
  const samples = [...series.values()][0]?.length ?? 0;
  // One restart per exit of k0s's main process since the kill, the first of them the SIGKILL.
  const restartsAccounted =
    exits.length > 0 &&
    exits[0]!.exit.line.includes('status=9/KILL') &&
    after.nRestarts === before.nRestarts + exits.length;
  for (const x of exits.slice(1))
    timeline.mark(
      `k0s exited again: ${x.exit.line}${x.cause ? `; its last error: ${x.cause.line.slice(0, 200)}` : ''}`,
    );
  const ok =
    captured !== undefined &&
    readyz.startsWith('200') &&
    underNew &&
    restartsAccounted &&
    allBackMs !== null;
  return {
    drill: 'kill-one',
    plane: 'k0s',
    unitSettings: settings,
    baseline: {
      samples: [...base.values()][0]!.length,
      probes: probes.map((p) => p.name),
      allOk: true,
      mainPid: t0.mainPid,
      children: t0.children,
    },
    broken: {
      action: `kill -9 ${before.mainPid} (MainPID of ${K0S_UNIT}.service) on ${lab.host.name}`,
      at: new Date(killAt).toISOString(),
      mainPid: before.mainPid,
    },
    captured: captured ? [captured] : [],
    restartLine: restartLine ?? null,
    supervised,
    timeToDetectMs: captured ? Math.max(0, Date.parse(captured.at) - killAt) : null,
    samples,
    outages: down,
    wentDown: [...new Set(down.map((x) => x.component))],
    allBackMs,
    k0sRestart: {
      by:
        after.nRestarts > before.nRestarts
          ? `systemd (Restart=${settings.Restart}, RestartSec ${settings.RestartUSec}; NRestarts ${before.nRestarts} -> ${after.nRestarts})`
          : `not systemd (NRestarts stayed ${after.nRestarts})`,
      nRestartsBefore: before.nRestarts,
      nRestartsAfter: after.nRestarts,
      execMainStartBefore: before.execMainStart,
      execMainStartAfter: after.execMainStart,
      newMainPid: nm?.pid ?? null,
      newMainSeenAfterMs: nm ? nm.at - killAt : null,
      exits,
    },
    children: fates,
    final: {
      readyz,
      mainPid: fin.mainPid,
      children: fin.children,
      everyChildUnderNewMain: underNew,
    },
    sources: sources(lab.version),
    ok,
  };
}

export async function killK0s(o: KillK0sOptions, log: Logger): Promise<KillK0sReport> {
  const timeline = new Timeline(log);
  log.step(`Fresh lab "${o.lab}" with one k0s controller`);
  const lab = await k0sLabUp(o.lab, o.stateDir, log).catch(async (err: unknown) => {
    if (!o.keepLab) await k0sLabDown(o.lab, o.stateDir, log).catch(() => undefined);
    throw err;
  });
  timeline.mark(
    `k0s ${lab.version} up on ${lab.host.name} (${lab.host.address}): /readyz ok, Leases held`,
  );
  try {
    const r = await observe(lab, o, timeline, log);
    return {
      ...r,
      lab: o.lab,
      host: lab.host,
      k0sVersion: lab.version,
      bringUp: lab.plane.steps.map((x) => ({ step: x.step, ms: x.ms })),
      keptLab: o.keepLab,
      timeline: timeline.entries(),
    };
  } finally {
    await lab.session.close();
    if (!o.keepLab) {
      await k0sLabDown(o.lab, o.stateDir, log);
      timeline.mark(`lab "${o.lab}" torn down`);
    }
  }
}
