// A test whose input is missing (an archive under ../shared/sources, a binary the build puts in the
// cache) skips on a developer's machine, where setup may not have run, and fails in CI (CI=true),
// where scripts/run test has set everything up and a skip would hide a broken setup.
import { existsSync } from 'node:fs';
import { expect } from 'vitest';

export const IN_CI = process.env.CI === 'true';

export function missingInputs(...paths: string[]): string[] {
  return paths.filter((p) => !existsSync(p));
}

/** For `it.skipIf`: true only outside CI, when an input is missing. */
export function skipWithoutInputs(...paths: string[]): boolean {
  return !IN_CI && missingInputs(...paths).length > 0;
}

/** The first line of such a test: in CI, a missing input fails here and names its path. */
export function requireInputs(...paths: string[]): void {
  expect(
    missingInputs(...paths),
    'test inputs missing (CI=true, so this fails instead of skipping)',
  ).toEqual([]);
}
