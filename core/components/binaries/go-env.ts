// Where every go invocation keeps its caches: under ~/.cache, so CI on this machine reuses them.
import { homedir } from 'node:os';
import { join } from 'node:path';

export function goModCache(): string {
  return process.env.HARDWIRE_GOMODCACHE ?? join(homedir(), '.cache', 'hardwire', 'gomod');
}

export function goBuildCache(): string {
  return join(homedir(), '.cache', 'go-build');
}

/**
 * The component builds' own build cache. Their binaries are kept in the binary cache, so what they
 * leave here (about 15 GB for the setup's builds) is read again only by a rebuild: scripts/setup.sh
 * removes it when it is over 2 GB (the test rebuilds' few hundred MB stay), since a lab host's
 * kubelet evicts Pods on a fuller disk (harness/lab/disk.ts). The flag analyzer keeps the shared
 * cache above, which its next run reads.
 */
export function componentBuildCache(): string {
  // Beside the module cache, not under $HARDWIRE_CACHE: tests that build into a cache of their own
  // (test/components.test.ts) still share compiled packages.
  return join(homedir(), '.cache', 'hardwire', 'go-build-components');
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
