// When units went down and came up, read from systemd on each host, not from a command's report. Lab
// hosts share this machine's kernel, so their monotonic clocks are one clock and compare across hosts.
import { expect } from 'vitest';
import { onHost } from './journal.ts';
import type { TestLab } from './lab.ts';

/**
 * `host/unit` -> ActiveEnterTimestampMonotonic and ActiveExitTimestampMonotonic (µs), NRestarts
 * (systemd's own restarts after the process exited, which a `systemctl restart` does not count)
 * and when it was read (ms since the epoch).
 */
export type UnitClocks = Record<
  string,
  { enter: number; exit: number; restarts: number; readAt: number }
>;

export async function unitClocks(
  lab: TestLab,
  hosts: readonly string[],
  units: readonly string[],
): Promise<UnitClocks> {
  const out: UnitClocks = {};
  for (const host of hosts) {
    const readAt = Date.now();
    const text = await onHost(lab, host, [
      'systemctl',
      'show',
      '-p',
      'Id,ActiveEnterTimestampMonotonic,ActiveExitTimestampMonotonic,NRestarts',
      ...units,
    ]);
    for (const block of text.trim().split(/\n\s*\n/)) {
      const p = Object.fromEntries(
        block.split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
      expect(units, `${host}: systemctl show ${block}`).toContain(p.Id);
      out[`${host}/${p.Id}`] = {
        enter: Number(p.ActiveEnterTimestampMonotonic),
        exit: Number(p.ActiveExitTimestampMonotonic),
        restarts: Number(p.NRestarts),
        readAt,
      };
    }
  }
  expect(Object.keys(out)).toHaveLength(hosts.length * units.length);
  return out;
}

/**
 * (Soft assertions: every unit out of place is reported, not only the first.)
 * Exactly the units in `order` restarted, one at a time in that order: each came up again after
 * `before`, and each went down only after the one before it was up again. Every other unit untouched,
 * but for one thing a roll may cause and not do: a controller-manager or scheduler that loses its
 * leader Lease while its apiserver restarts exits by design, and systemd restarts it. That is allowed
 * only when systemd counted the restart (NRestarts) and the unit's journal since `before` logs the
 * lost lease (kube-controller-manager: controllermanager.go:413, kube-scheduler: server.go:328 at
 * v1.36.3); it is printed, never silent. Such a unit in `order` is still checked for its restart, but
 * its last exit may be its own, so the one-at-a-time check skips it.
 */
export async function expectRolled(
  lab: TestLab,
  before: UnitClocks,
  after: UnitClocks,
  order: readonly string[],
): Promise<void> {
  const lost = new Map<string, string>();
  for (const k of Object.keys(before)) {
    const line = await lostLease(lab, k, before[k]!, after[k]!);
    if (line) lost.set(k, line);
  }
  for (const k of order)
    expect.soft(after[k]!.enter, `${k} restarted`).toBeGreaterThan(before[k]!.enter);
  for (let i = 1; i < order.length; i++) {
    const k = order[i]!;
    const prev = order[i - 1]!;
    // Its last exit is its own when it lost the Lease just before its turn (systemd's auto-restart); printed below.
    if (lost.has(k)) continue;
    // The one before it exited on its own after its turn and systemd started it again: its last
    // enter is that restart, not the roll's. Allowed, and printed with its journal, so never hidden.
    if (after[prev]!.restarts > before[prev]!.restarts) {
      const [host, unit] = prev.split('/') as [string, string];
      const tail = await onHost(lab, host, [
        'journalctl',
        '-u',
        unit,
        `--since=@${Math.floor(before[prev]!.readAt / 1000) - 1}`,
        '-n',
        '6',
        '-o',
        'cat',
        '--no-pager',
      ]);
      console.log(
        `${prev} exited on its own after its turn and systemd restarted it (NRestarts ${before[prev]!.restarts} -> ${after[prev]!.restarts}); so ${k}'s order is not checked against it. Its last lines:\n${tail}`,
      );
      continue;
    }
    expect
      .soft(after[k]!.exit, `${k} went down only after ${prev} was up again`)
      .toBeGreaterThan(after[prev]!.enter);
  }
  for (const k of Object.keys(before).filter((x) => !order.includes(x))) {
    const [b, a] = [before[k]!, after[k]!];
    if (a.enter === b.enter && a.exit === b.exit) continue;
    expect
      .soft(
        lost.has(k),
        `${k} moved outside the roll (enter ${b.enter} -> ${a.enter}, exit ${b.exit} -> ${a.exit}, NRestarts ${b.restarts} -> ${a.restarts}): only a leader that lost its Lease, restarted by systemd, may`,
      )
      .toBe(true);
  }
  for (const [k, line] of lost)
    console.log(
      `${k} lost its leader Lease while an apiserver restarted, and systemd restarted it (NRestarts ${before[k]!.restarts} -> ${after[k]!.restarts}): ${line}`,
    );
}

/** The journal line of a lost leader Lease, when systemd also counted a restart of the unit since `b`; else ''. */
async function lostLease(
  lab: TestLab,
  k: string,
  b: UnitClocks[string],
  a: UnitClocks[string],
): Promise<string> {
  const [host, unit] = k.split('/') as [string, string];
  if (a.restarts <= b.restarts || !/^kube-(controller-manager|scheduler)\.service$/.test(unit))
    return '';
  const text = await onHost(lab, host, [
    'journalctl',
    '-u',
    unit,
    `--since=@${Math.floor(b.readAt / 1000) - 1}`,
    '-o',
    'cat',
    '--no-pager',
    '--case-sensitive=false',
    '--grep',
    'leaderelection lost',
  ]);
  return text.trim().split('\n')[0] ?? '';
}
