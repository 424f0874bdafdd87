// The rules kill-one --plane k0s reads a child's fate by, on snapshots shaped like `ps` output: a
// child gone before the new k0s started, one gone well before its supervisor started (exited on its
// own), one gone as its supervisor started (terminated from its PID file), one that died with k0s.
import { describe, expect, it } from 'vitest';
import { childFates, newMain, CLEANUP_SLACK_MS } from '../harness/drills/k0s-fates.ts';
import { parseSnap, type HostSnap } from '../harness/drills/k0s-probes.ts';

const show = (mainPid: number, n: number) =>
  `ActiveState=${mainPid ? 'active' : 'activating'}\nSubState=running\nMainPID=${mainPid}\nNRestarts=${n}\nExecMainStartTimestamp=x`;
const ps = (rows: [number, number, string, string][]) =>
  rows.map(([pid, ppid, stat, args]) => `  ${pid}  ${ppid} ${stat} ${args}`).join('\n');
const snap = (
  at: number,
  mainPid: number,
  n: number,
  rows: [number, number, string, string][],
): HostSnap => parseSnap(at, `${show(mainPid, n)}\n@@\n${ps(rows)}\n`);

const K = '/usr/local/bin/k0s controller --config=/etc/k0s/k0s.yaml';
const B = '/var/lib/k0s/bin';
// Killed at t=1000 (pid 100); new k0s 200 from t=11000; supervisors start at the times given.
const snaps = [
  snap(0, 100, 0, [
    [100, 1, 'Ssl', K],
    [110, 100, 'Sl', `${B}/etcd --name x`],
    [120, 100, 'Sl', `${B}/kube-apiserver --v=1`],
    [130, 100, 'Sl', `${B}/kube-scheduler`],
    [140, 100, 'Sl', '/usr/local/bin/k0s api --config=x'],
  ]),
  // The killed process is a zombie for a moment, its children still its own: not yet "after the kill".
  snap(1100, 0, 0, [
    [100, 1, 'Zsl', 'k0s'],
    [110, 100, 'Sl', `${B}/etcd`],
    [120, 100, 'Sl', `${B}/kube-apiserver`],
    [130, 100, 'Sl', `${B}/kube-scheduler`],
  ]),
  snap(2100, 0, 0, [
    [110, 1, 'Sl', `${B}/etcd`],
    [120, 1, 'Sl', `${B}/kube-apiserver`],
    [130, 1, 'Sl', `${B}/kube-scheduler`],
  ]),
  snap(9000, 0, 0, [
    [110, 1, 'Sl', `${B}/etcd`],
    [130, 1, 'Sl', `${B}/kube-scheduler`],
  ]),
  snap(12000, 200, 1, [
    [200, 1, 'Ssl', K],
    [110, 1, 'Sl', `${B}/etcd`],
    [130, 1, 'Sl', `${B}/kube-scheduler`],
  ]),
  snap(13000, 200, 1, [
    [200, 1, 'Ssl', K],
    [130, 1, 'Sl', `${B}/kube-scheduler`],
  ]),
  snap(14000, 200, 1, [
    [200, 1, 'Ssl', K],
    [210, 200, 'Sl', `${B}/etcd`],
    [220, 200, 'Sl', `${B}/kube-apiserver`],
  ]),
  snap(20000, 200, 1, [
    [200, 1, 'Ssl', K],
    [210, 200, 'Sl', `${B}/etcd`],
    [220, 200, 'Sl', `${B}/kube-apiserver`],
    [230, 200, 'Sl', `${B}/kube-scheduler`],
    [240, 200, 'Sl', '/usr/local/bin/k0s api'],
  ]),
];
const supervised = [
  { component: 'etcd', at: 12900 },
  { component: 'kube-apiserver', at: 13900 },
  { component: 'kube-scheduler', at: 19900 },
  { component: 'k0s-control-api', at: 19800 },
];

describe('childFates', () => {
  const nm = newMain(
    snaps.filter((s) => s.at >= 1000),
    100,
  )!;
  const f = Object.fromEntries(
    childFates(
      snaps,
      ['etcd', 'kube-apiserver', 'kube-scheduler', 'k0s api'],
      1000,
      100,
      nm.pid,
      nm.at,
      supervised,
    ).map((x) => [x.name, x]),
  );

  it('finds the new main process and reads names as compare does ("k0s api", zombies dropped)', () => {
    expect(nm).toEqual({ pid: 200, at: 12000 });
    expect(snaps[1]!.procs.map((p) => p.name)).toEqual([
      'etcd',
      'kube-apiserver',
      'kube-scheduler',
    ]);
    expect(snaps[0]!.procs.map((p) => p.name)).toContain('k0s api');
  });

  it('orphaned children: read after the zombie is gone, with their new parent', () => {
    expect(f.etcd!.afterKill).toEqual({ at: new Date(2100).toISOString(), running: true, ppid: 1 });
  });

  it('gone before the new k0s started: exited on its own', () => {
    expect(f['kube-apiserver']!.fate).toMatch(
      /exited 8\.0 s after the kill, before systemd had started a new k0s/,
    );
    expect(f['kube-apiserver']!.replacement).toEqual({
      pid: 220,
      ppid: 200,
      at: new Date(14000).toISOString(),
      underNewMain: true,
    });
    expect(f['kube-apiserver']!.absentMs).toBe(5000);
  });

  it('gone as its supervisor started: terminated by the new k0s; gone well before: not', () => {
    expect(f.etcd!.fate).toMatch(/the new k0s terminated it from its PID file/);
    expect(f['kube-scheduler']!.fate).toMatch(
      /exited on its own: gone 13\.0 s after the kill.*5\.9 s before "Starting to supervise"/,
    );
    expect(CLEANUP_SLACK_MS).toBeLessThan(19900 - 14000);
  });

  it('a child absent right after the kill died with its supervisor', () => {
    expect(f['k0s api']!.fate).toMatch(
      /gone by the first sample after the kill \(1\.1 s\): it died with its supervisor/,
    );
    expect(f['k0s api']!.replacement?.pid).toBe(240);
  });
});

describe('a new k0s that gives up: systemd starts another, and that one is the k0s that stayed', () => {
  // Killed at t=1000 (pid 100); k0s 200 starts etcd 210, then exits (an orphan outlived its stop
  // timeout); k0s 300 starts etcd 310 and stays.
  const twice = [
    snap(0, 100, 0, [
      [100, 1, 'Ssl', K],
      [110, 100, 'Sl', `${B}/etcd`],
    ]),
    snap(2000, 0, 0, [[110, 1, 'Sl', `${B}/etcd`]]),
    snap(12000, 200, 1, [
      [200, 1, 'Ssl', K],
      [210, 200, 'Sl', `${B}/etcd`],
    ]),
    snap(20000, 0, 1, []),
    snap(31000, 300, 2, [
      [300, 1, 'Ssl', K],
      [310, 300, 'Sl', `${B}/etcd`],
    ]),
    snap(32000, 300, 2, [
      [300, 1, 'Ssl', K],
      [310, 300, 'Sl', `${B}/etcd`],
    ]),
  ];
  const nm = newMain(
    twice.filter((s) => s.at >= 1000),
    100,
  )!;

  it('newMain: the last new MainPID, first seen when the first new k0s was', () => {
    expect(nm).toEqual({ pid: 300, at: 12000 });
  });

  it('the replacement is the child of the k0s that stayed, not of the one that gave up', () => {
    const [etcd] = childFates(twice, ['etcd'], 1000, 100, nm.pid, nm.at, [
      { component: 'etcd', at: 11900 },
    ]);
    expect(etcd!.replacement).toEqual({
      pid: 310,
      ppid: 300,
      at: new Date(31000).toISOString(),
      underNewMain: true,
    });
  });
});
