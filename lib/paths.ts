// Where hardwire keeps things outside git: build caches under ~/.cache, state under .hardwire/.
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export function cacheDir(): string {
  return resolve(process.env.HARDWIRE_CACHE ?? join(homedir(), '.cache', 'hardwire'));
}

export function defaultStateDir(): string {
  return resolve(process.env.HARDWIRE_STATE ?? '.hardwire');
}

export function expandHome(p: string): string {
  return p === '~' || p.startsWith('~/') ? join(homedir(), p.slice(1)) : p;
}

/** Repository root, for templates and committed data. */
export const repoRoot = resolve(import.meta.dirname, '..');
