// Go for the analyzer builds: $GO or /usr/local/go, with hardwire's module cache and a read-only build list.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir } from '../../lib/paths.ts';

export function goBinary(): string {
  if (process.env.GO) return process.env.GO;
  for (const p of ['/usr/local/go/bin/go']) if (existsSync(p)) return p;
  return 'go';
}

export function goEnv(): NodeJS.ProcessEnv {
  return { ...process.env, GOMODCACHE: process.env.GOMODCACHE ?? join(cacheDir(), 'gomod'), GOFLAGS: '-mod=readonly' };
}
