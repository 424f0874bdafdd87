import { defineConfig } from 'vitest/config';
import { dirname, join } from 'node:path';
import { UNIT_TESTS } from './vitest.unit.config.ts';

// HARDWIRE_PROFILE (scripts/bench-suite.ts, .ci/run): each file's times go to vitest.json beside it.
const profile = process.env.HARDWIRE_PROFILE;

// Two groups that never overlap (sequence.groupOrder): the unit tests (no lab, no root, no Go
// build), files in parallel as `pnpm test:unit` runs them, and everything else one file at a time:
// lab tests boot real containers and wire real clusters on a 2-core machine.
export default defineConfig({
  test: {
    reporters: profile ? ['default', ['json', { outputFile: join(dirname(profile), 'vitest.json') }]] : ['default'],
    projects: [
      { test: { name: 'unit', include: UNIT_TESTS, testTimeout: 60_000, sequence: { groupOrder: 0 } } },
      {
        test: {
          name: 'lab', include: ['test/**/*.test.ts'], exclude: UNIT_TESTS, fileParallelism: false,
          testTimeout: 120_000, hookTimeout: 900_000, sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
