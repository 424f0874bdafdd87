import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Lab tests boot real containers and wire real clusters on a 2-core machine: one file at a time.
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 900_000,
    reporters: ['default'],
  },
});
