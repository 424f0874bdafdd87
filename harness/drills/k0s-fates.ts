// What happened to each child of a killed k0s controller, read from the host snapshots taken once a
// second and from the new k0s's own journal: did it die with its supervisor or run on orphaned,
// when it went, whether the new k0s's supervisor had started for it by then, and the process that
// replaced it (its PID, and whether its parent is the new MainPID).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { iso } from './connected.ts';
import type { HostSnap, Proc } from './k0s-probes.ts';

/** The `component=` field k0s logs each supervisor under (seen in the k0scontroller journal). */
export const SUPERVISOR_NAME: Record<string, string> = {
  etcd: 'etcd',
  'konnectivity-server': 'konnectivity',
  'kube-apiserver': 'kube-apiserver',
  'k0s api': 'k0s-control-api',
  'kube-scheduler': 'kube-scheduler',
  'kube-controller-manager': 'kube-controller-manager',
};

/**
 * k0s's supervisor SIGTERMs the process in the old PID file and waits for it to exit just before it
 * logs "Starting to supervise". An orphan already gone from a snapshot taken more than this long
 * before that line was not terminated by it (a snapshot's ps runs a little after its timestamp).
 */
export const CLEANUP_SLACK_MS = 1000;

export interface Supervised {
  component: string;
  at: number;
  pid?: number;
}

export interface ChildFate {
  name: string;
  before: { pid: number; ppid: number } | null;
  /** The first snapshot after the kill: still running (and its parent then), or already gone. */
  afterKill: { at: string; running: boolean; ppid: number | null } | null;
  /** The old process's last sighting and the first snapshot without it. */
  lastSeen: string | null;
  goneBy: string | null;
  /** "Starting to supervise" of the new k0s for this component (its journal timestamp). */
  supervisorStarted: string | null;
  fate: string;
  replacement: { pid: number; ppid: number; at: string; underNewMain: boolean } | null;
  /** Time without any process of this name, from the first snapshot without the old one to the replacement's first. */
  absentMs: number | null;
}

const s1 = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function find(snap: HostSnap, name: string, pid?: number): Proc | undefined {
  return snap.procs.find((p) => p.name === name && (pid === undefined || p.pid === pid));
}

/** snaps in time order; killAt when kill -9 returned; newMainAt when the new k0s was first seen. */
export function childFates(
  snaps: HostSnap[],
  names: string[],
  killAt: number,
  killedPid: number,
  newMainPid: number,
  newMainAt: number | null,
  supervised: Supervised[],
): ChildFate[] {
  const before = [...snaps].reverse().find((x) => x.at < killAt);
  const after = snaps.filter((x) => x.at >= killAt);
  // A multi-threaded process takes a moment to exit: "after the kill" is the first snapshot in
  // which nothing is the killed process or still has it as parent.
  const first =
    after.find((x) => !x.procs.some((p) => p.pid === killedPid || p.ppid === killedPid)) ??
    after[0];
  return names.map((name) => {
    const old = before ? find(before, name) : undefined;
    const firstProc = first && old ? find(first, name, old.pid) : undefined;
    const lastIdx = old ? after.findLastIndex((x) => find(x, name, old.pid) !== undefined) : -1;
    const lastSeen = lastIdx >= 0 ? after[lastIdx]!.at : null;
    const gone = old ? after.find((x, i) => i > lastIdx && !find(x, name, old.pid)) : undefined;
    // The replacement is the child of the k0s that stayed; a k0s that gave up in between had its own.
    const isRep = (p: Proc) => p.name === name && p.pid !== old?.pid && p.ppid === newMainPid;
    const repSnap = after.find((x) => x.procs.some(isRep));
    const rep = repSnap ? repSnap.procs.find(isRep)! : undefined;
    const sup = supervised.find((x) => x.component === SUPERVISOR_NAME[name]);
    // Its parent right after the kill: PID 1 (or a subreaper) once the k0s it had is gone.
    const ran = firstProc
      ? firstProc.ppid === killedPid
        ? `kept its parent ${killedPid}, which had not died,`
        : `ran on orphaned (parent ${firstProc.ppid})`
      : '';
    let fate: string;
    if (!old) fate = 'was not running before the kill';
    else if (!firstProc)
      fate = `gone by the first sample after the kill (${s1(first!.at - killAt)}): it died with its supervisor`;
    else if (!gone) fate = `still the same process (pid ${old.pid}) at the end: never restarted`;
    else if (newMainAt === null || gone.at <= newMainAt)
      fate = `${ran}, then exited ${s1(gone.at - killAt)} after the kill, ${newMainAt === null ? 'with no new k0s started' : 'before systemd had started a new k0s'}`;
    else if (sup && gone.at >= sup.at - CLEANUP_SLACK_MS)
      fate = `${ran} until the new k0s's supervisor for it started (${s1(sup.at - killAt)} after the kill): the new k0s terminated it from its PID file, then started a new one`;
    else
      fate = `${ran}, then exited on its own: gone ${s1(gone.at - killAt)} after the kill, after the new k0s started but ${sup ? `${s1(sup.at - gone.at)} before` : 'with no'} "Starting to supervise" for it, so not terminated by k0s`;
    return {
      name,
      before: old ? { pid: old.pid, ppid: old.ppid } : null,
      afterKill: first
        ? { at: iso(first.at), running: firstProc !== undefined, ppid: firstProc?.ppid ?? null }
        : null,
      lastSeen: lastSeen === null ? null : iso(lastSeen),
      goneBy: gone ? iso(gone.at) : null,
      supervisorStarted: sup ? iso(sup.at) : null,
      fate,
      replacement:
        rep && repSnap
          ? {
              pid: rep.pid,
              ppid: rep.ppid,
              at: iso(repSnap.at),
              underNewMain: rep.ppid === newMainPid,
            }
          : null,
      absentMs: gone && repSnap ? Math.max(0, repSnap.at - gone.at) : null,
    };
  });
}

/**
 * When a new k0s was first seen (`at`), and the k0s that stayed (`pid`: the MainPID of the last
 * snapshot with one other than the killed one). After one restart they are the same process; after
 * a new k0s gave up, `pid` is the one systemd started next.
 */
export function newMain(snaps: HostSnap[], killedPid: number): { pid: number; at: number } | null {
  const isNew = (x: HostSnap) => x.unit.mainPid > 0 && x.unit.mainPid !== killedPid;
  const first = snaps.find(isNew);
  return first ? { pid: snaps.findLast(isNew)!.unit.mainPid, at: first.at } : null;
}

export interface SourceSite {
  file: string;
  line: number;
  url: string;
  text: string;
}

/** A line of the pinned k0s source holding `needle`, as file:line with its URL at the tag. */
export function k0sSite(
  tree: string,
  tag: string,
  file: string,
  needle: string,
): SourceSite | undefined {
  const path = join(tree, file);
  if (!existsSync(path)) return undefined;
  const i = readFileSync(path, 'utf8')
    .split('\n')
    .findIndex((l) => l.includes(needle));
  if (i < 0) return undefined;
  return {
    file,
    line: i + 1,
    url: `https://github.com/k0sproject/k0s/blob/${encodeURIComponent(tag)}/${file}#L${i + 1}`,
    text: needle,
  };
}
