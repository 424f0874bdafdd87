import { defineConfig } from 'vitest/config';
import { dirname, join } from 'node:path';
import { UNIT_TESTS } from './vitest.unit.config.ts';

// HARDWIRE_PROFILE (scripts/bench-suite.ts, .ci/run): each file's times go to vitest.json beside it,
// or to vitest-lane<N>.json for a lane of scripts/test-lanes.ts.
const profile = process.env.HARDWIRE_PROFILE;
const report = process.env.HARDWIRE_LANE
  ? `vitest-lane${process.env.HARDWIRE_LANE}.json`
  : 'vitest.json';

// Two groups that never overlap (sequence.groupOrder): the unit tests (no lab, no root, no Go
// build), files in parallel as `pnpm test:unit` runs them, and everything else one file at a time:
// lab tests boot real containers and wire real clusters on a 2-core machine. `pnpm test` runs the
// lab project in the lanes of test/lanes.ts instead (scripts/test-lanes.ts), each one file at a time;
// a lab test's default timeout allows for two other lanes beside it (300 s, not 120).
export default defineConfig({
  test: {
    reporters: profile
      ? ['default', ['json', { outputFile: join(dirname(profile), report) }]]
      : ['default'],
    projects: [
      {
        test: {
          name: 'unit',
          include: UNIT_TESTS,
          testTimeout: 60_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'lab',
          include: ['test/**/*.test.ts'],
          exclude: UNIT_TESTS,
          fileParallelism: false,
          testTimeout: 300_000,
          hookTimeout: 900_000,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
