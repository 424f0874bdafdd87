// The lab lanes (test/lanes.ts) can run side by side: every lab file is in one lane, files that
// restore the same wired lab share a lane, and no two lab names in the suite share a /24.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LAB_LANES } from './lanes.ts';
import { UNIT_TESTS } from '../vitest.unit.config.ts';
import { labPlan } from '../harness/lab/plan.ts';
import { K0S_FLAGS_LAB } from '../harness/prove/foreign/k0s.ts';
import { workerLabName } from '../harness/planes/k0s/worker-lab.ts';
import { repoRoot } from '../lib/paths.ts';

const labFiles = readdirSync(join(repoRoot, 'test'))
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => `test/${f}`)
  .filter((f) => !UNIT_TESTS.includes(f));

/** The lab names a test file boots or restores, read from its source. */
function labNames(file: string): string[] {
  const src = readFileSync(join(repoRoot, file), 'utf8');
  const names = new Set<string>();
  for (const re of [
    /\b(?:wiredTestLab|testLab)\(\s*'([a-z0-9-]+)'/g,
    /\bconst [A-Z0-9_]*(?:NAME|LAB)[A-Z0-9_]* = '([a-z0-9-]+)'/g,
    /\bSHAPE\b[^=\n]*= \{ name: '([a-z0-9-]+)'/g,
  ]) {
    for (const m of src.matchAll(re)) names.add(m[1]!);
  }
  // Labs the harness makes for a file: compare's k0s worker lab, flags prove's k0s controller.
  for (const n of [...names]) if (n.endsWith('-k0s')) names.add(workerLabName(n));
  if (/\bwiredTestLab\(/.test(src) && /--flags-of', 'k0s'/.test(src)) names.add(K0S_FLAGS_LAB);
  return [...names];
}

describe('lab lanes', () => {
  it('hold every lab file exactly once, and nothing else', () => {
    const listed = LAB_LANES.flat();
    expect(
      listed.filter((f, i) => listed.indexOf(f) !== i),
      'in two lanes',
    ).toEqual([]);
    expect([...listed].sort()).toEqual([...labFiles].sort());
  });

  it('keep the files that use one lab name (a wired lab they restore in turn) in one lane', () => {
    const laneOf = new Map<string, number>();
    for (const [i, files] of LAB_LANES.entries()) {
      for (const f of files) {
        for (const name of labNames(f)) {
          const seen = laneOf.get(name);
          expect(
            seen === undefined || seen === i,
            `${f} uses lab ${name}, which lane ${(seen ?? 0) + 1} also uses: move it there`,
          ).toBe(true);
          laneOf.set(name, i);
        }
      }
    }
    expect(laneOf.size).toBeGreaterThanOrEqual(5); // w1, w2, w3, w1w, w3w
  });

  it("give every lab name in the suite a /24 of its own, away from lab-offline's bridges and the inner network", () => {
    const owner = new Map<string, string>(); // subnet -> "name (file)"
    for (const f of labFiles) {
      const src = readFileSync(join(repoRoot, f), 'utf8');
      const names = labNames(f);
      if (/\b(?:labUp|testLab|wiredTestLab|labConnect)\(/.test(src))
        expect(names.length, `${f} makes labs, but no name was read from it`).toBeGreaterThan(0);
      for (const name of names) {
        const subnet = labPlan(name, 1).subnet.text;
        const other = owner.get(subnet);
        expect(
          other === undefined || other.startsWith(`${name} `),
          `${name} (${f}) and ${other} share ${subnet}: rename one`,
        ).toBe(true);
        owner.set(subnet, `${name} (${f})`);
      }
    }
    for (const fixed of ['10.213.77.0/24', '10.213.78.0/24', '10.213.255.0/24'])
      expect(owner.get(fixed), fixed).toBeUndefined();
    expect(owner.size).toBeGreaterThanOrEqual(20);
  });
});
