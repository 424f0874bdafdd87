// Re-opening a citation as a reader would: the cited line of a file in hardwire's Go module cache
// (GOMODCACHE, ~/.cache/hardwire/gomod), read here, not through the code that wrote the citation.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';

export const modcache = process.env.GOMODCACHE ?? join(homedir(), '.cache', 'hardwire', 'gomod');

/** A module's directory in the cache; module paths are case-encoded there (uppercase becomes !lowercase). */
export function moduleDir(module: string, version: string): string {
  return join(modcache, `${module.replace(/[A-Z]/g, (c) => `!${c.toLowerCase()}`)}@${version}`);
}

/** Line `line` (1-based) of `file` under `root`; the test fails if the file or the line is missing. */
export function reopen(root: string, file: string, line: number): string {
  const path = join(root, file);
  expect(existsSync(path), path).toBe(true);
  const text = readFileSync(path, 'utf8').split('\n')[line - 1];
  expect(text, `${path}:${line}`).toBeDefined();
  return text!;
}

/** The line a flag-map site (module, version, file, line) cites. */
export function reopenSite(s: {
  module: string;
  version: string;
  file: string;
  line: number;
}): string {
  return reopen(moduleDir(s.module, s.version), s.file, s.line);
}
