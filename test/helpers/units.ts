// When units went down and came up, read from systemd on each host, not from a command's report. Lab
// hosts share this machine's kernel, so their monotonic clocks are one clock and compare across hosts.
import { expect } from 'vitest';
import { onHost } from './journal.ts';
import type { TestLab } from './lab.ts';

/** `host/unit` -> ActiveEnterTimestampMonotonic and ActiveExitTimestampMonotonic (µs). */
export type UnitClocks = Record<string, { enter: number; exit: number }>;

export async function unitClocks(lab: TestLab, hosts: readonly string[], units: readonly string[]): Promise<UnitClocks> {
  const out: UnitClocks = {};
  for (const host of hosts) {
    const text = await onHost(lab, host, ['systemctl', 'show', '-p', 'Id,ActiveEnterTimestampMonotonic,ActiveExitTimestampMonotonic', ...units]);
    for (const block of text.trim().split(/\n\s*\n/)) {
      const p = Object.fromEntries(block.split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
      expect(units, `${host}: systemctl show ${block}`).toContain(p.Id);
      out[`${host}/${p.Id}`] = { enter: Number(p.ActiveEnterTimestampMonotonic), exit: Number(p.ActiveExitTimestampMonotonic) };
    }
  }
  expect(Object.keys(out)).toHaveLength(hosts.length * units.length);
  return out;
}

/**
 * (Soft assertions: every unit out of place is reported, not only the first.)
 * Exactly the units in `order` restarted, one at a time in that order: each came up again after
 * `before`, and each went down only after the one before it was up again. Every other unit untouched.
 */
export function expectRolled(before: UnitClocks, after: UnitClocks, order: readonly string[]): void {
  for (const k of order) expect.soft(after[k]!.enter, `${k} restarted`).toBeGreaterThan(before[k]!.enter);
  for (let i = 1; i < order.length; i++) {
    expect.soft(after[order[i]!]!.exit, `${order[i]} went down only after ${order[i - 1]} was up again`).toBeGreaterThan(after[order[i - 1]!]!.enter);
  }
  const others = Object.keys(before).filter((k) => !order.includes(k));
  expect.soft(Object.fromEntries(others.map((k) => [k, after[k]])), 'units not in the roll are untouched').toEqual(Object.fromEntries(others.map((k) => [k, before[k]])));
}
