// The API kinds each k8s.io/api release marks for removal (issue 24): read from the generated
// zz_generated.prerelease-lifecycle.go files in the module cache, whose APILifecycleRemoved() the
// apiserver itself consults to stop serving a kind (k8s.io/apiserver@v0.37.2/pkg/server/deleted_kinds.go:146).
// A group/version can also vanish with no such function: its package is simply gone from the next
// k8s.io/api (scheduling/v1alpha2 at v0.37.2). Those are found by comparing the package directories
// of the previous minor's module tree with this one's, and listed with the same shape, cited at
// their registration in the previous tree. Committed beside the flag maps as
// core/flags/data/<v>/api-lifecycle.json; reading it needs no Go (core/flags/api-lifecycle.ts).
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
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

/** Directories of group/version packages (a register.go beside a v1, v1beta1, v1alpha2… name), relative to root. */
function versionPackages(root: string, dir = root): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e);
    if (!statSync(p).isDirectory()) return [];
    const here =
      /^v\d+((alpha|beta)\d+)?$/.test(e) && existsSync(join(p, 'register.go'))
        ? [relative(root, p)]
        : [];
    return [...here, ...versionPackages(root, p)];
  });
}

function groupOf(pkg: string): string {
  const group = /GroupName = "([^"]*)"/.exec(readFileSync(join(pkg, 'register.go'), 'utf8'))?.[1];
  if (group === undefined) throw new Error(`${pkg}/register.go declares no GroupName`);
  return group;
}

function moduleRoot(modcache: string, version: string): string {
  const root = join(modcache, `k8s.io/api@${version}`);
  if (!existsSync(root))
    throw new Error(`${root} is missing: go mod download k8s.io/api@${version}`);
  return root;
}

/**
 * The kinds of each group/version package in k8s.io/api at `previous` that `version` no longer
 * has: the apiserver cannot serve what its API module lacks, so they are removed at `version`'s
 * minor, whatever APILifecycleRemoved() says (they had none). Each kind is cited at its
 * `&Kind{},` line in addKnownTypes in the previous tree's register.go.
 */
export function goneKinds(modcache: string, previous: string, version: string): RemovedKind[] {
  const [before, after] = [moduleRoot(modcache, previous), moduleRoot(modcache, version)];
  const removed = /^v0\.(\d+)\./.exec(version)?.[1];
  const kinds: RemovedKind[] = [];
  for (const rel of versionPackages(before).filter(
    (r) => !existsSync(join(after, r, 'register.go')),
  )) {
    const group = groupOf(join(before, rel));
    const lines = readFileSync(join(before, rel, 'register.go'), 'utf8').split('\n');
    const start = lines.findIndex((l) => l.startsWith('func addKnownTypes('));
    for (let i = start; i >= 0 && i < lines.length && lines[i] !== '}'; i++) {
      for (const m of lines[i]!.matchAll(/&(\w+)\{\}/g)) {
        if (m[1]!.endsWith('List')) continue;
        kinds.push({
          group,
          version: basename(rel),
          kind: m[1]!,
          removed: `1.${removed}`,
          removedAt: `k8s.io/api@${previous}/${rel}/register.go:${i + 1}`,
          gone: `package ${rel} is in k8s.io/api@${previous} and not in k8s.io/api@${version}`,
        });
      }
    }
  }
  return kinds;
}

/**
 * Every non-List kind with an APILifecycleRemoved(), its group from the package's register.go;
 * with `previous` (the Kubernetes release one minor below), also the kinds of packages gone since.
 */
export function deriveApiLifecycle(
  kubernetes: string,
  modcache = goEnv().GOMODCACHE ?? '',
  previous?: string,
): ApiLifecycle {
  const version = apiModuleVersion(kubernetes);
  const root = moduleRoot(modcache, version);
  const kinds: RemovedKind[] = [];
  for (const file of files(root, 'zz_generated.prerelease-lifecycle.go')) {
    const group = groupOf(join(file, '..'));
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((l, i) => {
      const kind = FUNC.exec(l)?.[1];
      const ret = RETURN.exec(lines[i + 1] ?? '');
      if (!kind || !ret || kind.endsWith('List')) return;
      const rel = relative(root, file);
      kinds.push({
        group,
        version: rel.split('/').at(-2)!,
        kind,
        removed: `${ret[1]}.${ret[2]}`,
        removedAt: `k8s.io/api@${version}/${rel}:${i + 1}`,
      });
    });
  }
  const from = previous === undefined ? undefined : apiModuleVersion(previous);
  if (from) kinds.push(...goneKinds(modcache, from, version));
  kinds.sort((a, b) => a.removedAt.localeCompare(b.removedAt, 'en', { numeric: true }));
  return {
    module: 'k8s.io/api',
    version,
    ...(from ? { comparedWith: `k8s.io/api@${from}` } : {}),
    kinds,
  };
}

/** `previous`: the Kubernetes release one minor below whose k8s.io/api tree is compared (none: no comparison). */
export function writeApiLifecycle(kubernetes: string, outDir: string, previous?: string): void {
  writeFileSync(
    join(outDir, 'api-lifecycle.json'),
    `${JSON.stringify(deriveApiLifecycle(kubernetes, undefined, previous), null, 2)}\n`,
  );
}
