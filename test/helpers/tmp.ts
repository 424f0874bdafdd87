import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

// Removed after the importing test file's tests (a file-level hook, registered when the file imports
// this): left behind, one day's runs kept 2 GB of etcd data dirs in /tmp, and the lab's disk guard refused.
const made: string[] = [];
afterAll(() => {
  if (process.env.HARDWIRE_KEEP_TMP) return;
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

export function tempDir(prefix = 'hardwire-test-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  made.push(d);
  return d;
}
