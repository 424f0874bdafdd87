// Where every go invocation keeps its caches: under ~/.cache, so CI on this machine reuses them.
import { homedir } from 'node:os';
import { join } from 'node:path';

export function goModCache(): string {
  return process.env.HARDWIRE_GOMODCACHE ?? join(homedir(), '.cache', 'hardwire', 'gomod');
}

export function goBuildCache(): string {
  return join(homedir(), '.cache', 'go-build');
}

/** Environment for every go invocation. */
export function goEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GOMODCACHE: goModCache(),
    GOCACHE: goBuildCache(),
    GOWORK: 'off',
    GOFLAGS: '-buildvcs=false',
    ...extra,
  };
}
