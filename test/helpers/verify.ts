// `hardwire verify` in its own process: every gate run afresh and the API smoke test. A report's own
// gate list proves nothing when it is empty; this one must be non-empty and all ok.
import { expect } from 'vitest';
import { hardwire } from './cli.ts';

export interface VerifyDoc {
  ok: boolean;
  gates: { name: string; ok: boolean; detail?: string }[];
  smoke: { name: string; ok: boolean }[];
}

export function verifyGreen(inv: string, state: string, label = 'verify'): VerifyDoc {
  const v = hardwire(['verify', '--inventory', inv, '--state-dir', state, '--json'], {
    timeoutMs: 300_000,
  });
  expect(v.code, `${label}: ${v.stderr.slice(-2000)}`).toBe(0);
  const doc = JSON.parse(v.stdout) as VerifyDoc;
  expect(doc.gates.length, `${label}: gates run`).toBeGreaterThan(0);
  expect(
    doc.gates.filter((g) => !g.ok),
    `${label}: failing gates`,
  ).toEqual([]);
  expect(doc.smoke.length, `${label}: smoke checks run`).toBeGreaterThan(0);
  expect(
    doc.smoke.filter((g) => !g.ok),
    `${label}: failing smoke checks`,
  ).toEqual([]);
  return doc;
}
