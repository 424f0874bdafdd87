// The API kinds each k8s.io/api release marks for removal (issue 24): read from the generated
// zz_generated.prerelease-lifecycle.go files in the module cache, whose APILifecycleRemoved() the
// apiserver itself consults to stop serving a kind (k8s.io/apiserver@v0.37.2/pkg/server/deleted_kinds.go:146).
// Committed beside the flag maps as flags/data/<v>/api-lifecycle.json; reading it needs no Go.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { dataDir } from './map.ts';
import { goEnv } from './go.ts';
import type { ApiLifecycle, RemovedKind } from '../../core/upgrade/stored-apis.ts';

export type { ApiLifecycle } from '../../core/upgrade/stored-apis.ts';


const FUNC = /^func \(in \*(\w+)\) APILifecycleRemoved\(\) \(major, minor int\) \{$/;
const RETURN = /^\treturn (\d+), (\d+)$/;

/** k8s.io/api is tagged v0.<minor>.<patch> alongside k8s.io/kubernetes v1.<minor>.<patch>. */
export function apiModuleVersion(kubernetes: string): string {
  return kubernetes.replace(/^v1\./, 'v0.');
}

function files(dir: string, name: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) return files(p, name);
    return e === name ? [p] : [];
  });
}

/** Every non-List kind with an APILifecycleRemoved(), its group from the package's register.go. */
export function deriveApiLifecycle(kubernetes: string, modcache = goEnv().GOMODCACHE ?? ''): ApiLifecycle {
  const version = apiModuleVersion(kubernetes);
  const root = join(modcache, `k8s.io/api@${version}`);
  if (!existsSync(root)) throw new Error(`${root} is missing: go mod download k8s.io/api@${version}`);
  const kinds: RemovedKind[] = [];
  for (const file of files(root, 'zz_generated.prerelease-lifecycle.go')) {
    const pkg = join(file, '..');
    const group = /GroupName = "([^"]*)"/.exec(readFileSync(join(pkg, 'register.go'), 'utf8'))?.[1];
    if (group === undefined) throw new Error(`${pkg}/register.go declares no GroupName`);
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((l, i) => {
      const kind = FUNC.exec(l)?.[1];
      const ret = RETURN.exec(lines[i + 1] ?? '');
      if (!kind || !ret || kind.endsWith('List')) return;
      const rel = relative(root, file);
      kinds.push({ group, version: rel.split('/').at(-2)!, kind, removed: `${ret[1]}.${ret[2]}`, removedAt: `k8s.io/api@${version}/${rel}:${i + 1}` });
    });
  }
  kinds.sort((a, b) => a.removedAt.localeCompare(b.removedAt, 'en', { numeric: true }));
  return { module: 'k8s.io/api', version, kinds };
}

export function writeApiLifecycle(kubernetes: string, outDir: string): void {
  writeFileSync(join(outDir, 'api-lifecycle.json'), `${JSON.stringify(deriveApiLifecycle(kubernetes), null, 2)}\n`);
}

export function loadApiLifecycle(kubernetes: string): ApiLifecycle | null {
  const file = join(dataDir(kubernetes), 'api-lifecycle.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) as ApiLifecycle : null;
}
