// Builds component binaries from Go modules: the offline path. Module and build caches stay
// under ~/.cache (GOMODCACHE=~/.cache/hardwire/gomod, GOCACHE=~/.cache/go-build), never in git.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { InputError, StepError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import { cacheDir, repoRoot } from '../../lib/paths.ts';
import { GO_PACKAGES, groupOf, type ComponentGroup, type ComponentName, type VersionSet } from './catalog.ts';
import { run } from '../../lib/proc.ts';
import { sourceRecipe, sourceTree, type ResolvedSource } from './sources.ts';

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

function go(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; step: string; onLine?: (l: string) => void }) {
  return run('go', args, {
    step: opts.step,
    cwd: opts.cwd,
    env: opts.env ?? goEnv(),
    onStderrLine: opts.onLine,
    label: `go ${args[0]}`,
    hint: 'install Go 1.26 or use "components fetch"',
    tailOf: 'all',
    tailLines: 25,
  });
}

let goVersionMemo: Promise<string> | undefined;
export function goVersion(): Promise<string> {
  goVersionMemo ??= go(['env', 'GOVERSION'], { cwd: repoRoot, step: 'go version' }).then((r) => r.stdout.trim());
  return goVersionMemo;
}

/** How one group is built: module directory, packages, tags, ldflags, cgo. */
export interface BuildPlan {
  group: ComponentGroup;
  version: string;
  moduleDir: string;
  tags: string[];
  ldflags: string[];
  cgo: boolean;
  /** Files whose content decides the result (go.mod, go.sum, ...). */
  inputs: string[];
  /** Extra text that decides the result (e.g. the k0s commit). */
  salt: string;
}

function k8sLdflags(v: string): string[] {
  const m = /^v(\d+)\.(\d+)\.\d+$/.exec(v);
  if (!m) throw new InputError('kubernetesVersion', `${v} is not vMAJOR.MINOR.PATCH`);
  const flags = ['-s', '-w'];
  // The same variables Kubernetes' hack/lib/version.sh sets, in both version packages.
  for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) {
    flags.push(
      '-X', `${pkg}.gitVersion=${v}`,
      '-X', `${pkg}.gitMajor=${m[1]}`,
      '-X', `${pkg}.gitMinor=${m[2]}`,
      '-X', `${pkg}.gitTreeState=clean`,
      '-X', `${pkg}.buildDate=1970-01-01T00:00:00Z`,
    );
  }
  return flags;
}

async function requireInGoMod(moduleDir: string, modulePath: string, version: string, field: string): Promise<void> {
  const text = await readFile(join(moduleDir, 'go.mod'), 'utf8');
  const m = new RegExp(`^\\s*(?:require\\s+)?${modulePath.replace(/[.]/g, '\\.')}\\s+(\\S+)`, 'm').exec(text);
  if (!m) throw new StepError('go module', `${moduleDir}/go.mod does not require ${modulePath}`);
  if (m[1] !== version) {
    throw new InputError(field, `${version} cannot be built: ${moduleDir.replace(`${repoRoot}/`, '')}/go.mod pins ${modulePath} ${m[1]}; use "components fetch", --from DIR, or regenerate that module`);
  }
}

export async function planFor(group: ComponentGroup, versions: VersionSet): Promise<BuildPlan> {
  if (group === 'kubernetes') {
    const moduleDir = join(repoRoot, 'components', 'go', 'kubernetes');
    await requireInGoMod(moduleDir, 'k8s.io/kubernetes', versions.kubernetes, 'kubernetesVersion');
    return {
      group, version: versions.kubernetes, moduleDir, tags: ['providerless'], ldflags: k8sLdflags(versions.kubernetes), cgo: false,
      inputs: ['go.mod', 'go.sum', 'tools.go'].map((f) => join(moduleDir, f)), salt: '',
    };
  }
  if (group === 'etcd') {
    const moduleDir = join(repoRoot, 'components', 'go', 'etcd');
    await requireInGoMod(moduleDir, 'go.etcd.io/etcd/server/v3', versions.etcd, 'etcdVersion');
    await requireInGoMod(moduleDir, 'go.etcd.io/etcd/etcdctl/v3', versions.etcd, 'etcdVersion');
    await requireInGoMod(moduleDir, 'go.etcd.io/etcd/etcdutl/v3', versions.etcd, 'etcdVersion');
    // etcd's version is a constant in go.etcd.io/etcd/api/v3/version; GitSHA is the only ldflag
    // its build script sets, and the release commit is not known here, so it keeps its default.
    return {
      group, version: versions.etcd, moduleDir, tags: [], ldflags: ['-s', '-w'], cgo: false,
      inputs: ['go.mod', 'go.sum', 'tools.go'].map((f) => join(moduleDir, f)), salt: '',
    };
  }
  if (group !== 'k0s') throw new StepError(`build ${group}`, `${group} is built from its source archive; give it with --source FILE|DIR`);
  return planK0s(versions);
}

/** A group built from a source tree (sources.ts): the tree is the module; its digest salts the recipe. */
function planSource(group: ComponentGroup, version: string, tree: string, digest: string): BuildPlan {
  const r = sourceRecipe(group)!;
  return { group, version, moduleDir: tree, tags: r.tags, ldflags: r.ldflags(version), cgo: false, inputs: [], salt: `${group}@${digest}` };
}

/**
 * k0s: a module generated under the cache (its go.sum cannot be committed before the module has
 * been resolved once). It requires k0s at the release tag's commit and repeats every replace of
 * k0s's own go.mod, since replace lines of a dependency are ignored by the consuming module.
 */
async function planK0s(versions: VersionSet): Promise<BuildPlan> {
  const moduleDir = join(cacheDir(), 'gosrc', `k0s-${versions.k0s}`);
  const kube = versions.kubernetes.replace(/^v/, '');
  const m = /^v(\d+)\.(\d+)\./.exec(versions.kubernetes)!;
  const vars: Record<string, string> = {};
  if (existsSync(join(moduleDir, 'versions.json'))) Object.assign(vars, JSON.parse(await readFile(join(moduleDir, 'versions.json'), 'utf8')) as Record<string, string>);
  const ldflags = ['-s', '-w',
    '-X', `github.com/k0sproject/k0s/pkg/build.Version=${versions.k0s}`,
    '-X', `github.com/k0sproject/k0s/pkg/build.KubernetesVersion=${kube}`,
    '-X', `github.com/k0sproject/k0s/pkg/build.EtcdVersion=${vars.etcd_version ?? versions.etcd.replace(/^v/, '')}`,
    '-X', `k8s.io/component-base/version.gitVersion=${versions.kubernetes}`,
    '-X', `k8s.io/component-base/version.gitMajor=${m[1]}`,
    '-X', `k8s.io/component-base/version.gitMinor=${m[2]}`,
    '-X', 'k8s.io/component-base/version.buildDate=1970-01-01T00:00:00Z',
    '-X', 'k8s.io/component-base/version.gitCommit=not_available',
  ];
  for (const [v, pkgVar] of [['runc_version', 'RuncVersion'], ['containerd_version', 'ContainerdVersion'], ['kine_version', 'KineVersion'], ['konnectivity_version', 'KonnectivityVersion']] as const) {
    if (vars[v]) ldflags.push('-X', `github.com/k0sproject/k0s/pkg/build.${pkgVar}=${vars[v]}`);
  }
  if (vars.containerd_version) ldflags.push('-X', `github.com/containerd/containerd/version.Version=${vars.containerd_version}`);
  ldflags.push('-extldflags=-static');
  return {
    group: 'k0s', version: versions.k0s, moduleDir, tags: ['osusergo', 'noembedbins'], ldflags, cgo: true,
    inputs: [], salt: `k0s@${versions.k0sCommit}`,
  };
}

/** Resolves the generated k0s module: go get by commit, copy k0s's replaces, tidy. Needs the module proxy. */
async function prepareK0s(plan: BuildPlan, versions: VersionSet, log: Logger): Promise<BuildPlan> {
  const dir = plan.moduleDir;
  if (existsSync(join(dir, 'go.sum')) && existsSync(join(dir, 'versions.json'))) return planK0s(versions);
  log.info(`  resolving github.com/k0sproject/k0s@${versions.k0sCommit} (${versions.k0s})`);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'go.mod'), 'module hardwire.local/components/k0s\n\ngo 1.26.0\n');
  await writeFile(join(dir, 'tools.go'), '//go:build tools\n\npackage tools\n\nimport _ "github.com/k0sproject/k0s"\n');
  const env = goEnv({ GOFLAGS: '-buildvcs=false -mod=mod' });
  const step = `resolve k0s ${versions.k0s}`;
  await go(['get', `github.com/k0sproject/k0s@${versions.k0sCommit}`], { cwd: dir, env, step });
  const info = JSON.parse((await go(['mod', 'download', '-json', 'github.com/k0sproject/k0s'], { cwd: dir, env, step })).stdout) as { GoMod: string; Dir: string; Version: string };
  const upstream = await readFile(info.GoMod, 'utf8');
  const edits: string[] = [];
  for (const [, from, to, ver] of upstream.matchAll(/^\s*(?:replace\s+)?(\S+)(?:\s+\S+)?\s+=>\s+(\S+)\s+(v\S+)\s*$/gm)) {
    if (from && to && ver && !to.startsWith('.')) edits.push(`-replace=${from}=${to}@${ver}`);
  }
  if (edits.length > 0) await go(['mod', 'edit', ...edits], { cwd: dir, env, step });
  await go(['mod', 'tidy'], { cwd: dir, env, step });
  const vars: Record<string, string> = {};
  const mk = await readFile(join(info.Dir, 'embedded-bins', 'Makefile.variables'), 'utf8').catch(() => '');
  for (const [, k, v] of mk.matchAll(/^(\w+_version)\s*[:?]?=\s*(\S+)\s*$/gm)) if (k && v) vars[k] = v;
  await writeFile(join(dir, 'versions.json'), `${JSON.stringify({ ...vars, k0sModuleVersion: info.Version }, null, 2)}\n`);
  log.info(`  k0s resolved as ${info.Version} with ${edits.length} replace lines`);
  return planK0s(versions);
}

/** Hash of everything that decides a build's output. A cached build with another recipe is stale. */
export async function recipeOf(plan: BuildPlan): Promise<string> {
  const h = createHash('sha256');
  h.update(JSON.stringify({ goVersion: await goVersion(), tags: plan.tags, ldflags: plan.ldflags, cgo: plan.cgo, salt: plan.salt }));
  for (const f of plan.inputs) h.update(await readFile(f));
  return h.digest('hex');
}

function defaultBinaryName(pkg: string): string {
  const parts = pkg.split('/');
  const last = parts.at(-1)!;
  return /^v\d+$/.test(last) ? parts.at(-2)! : last;
}

function fmtElapsed(ms: number): string {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

export interface BuildResult {
  files: Map<ComponentName, string>;
  recipe: string;
  moduleDir: string;
  seconds: number;
}

/**
 * Runs go build for some binaries of one group into outDir, printing progress every
 * progressMs (default 30 s) because a cold Kubernetes build takes minutes.
 */
export async function goBuild(names: ComponentName[], versions: VersionSet, outDir: string, log: Logger, progressMs = 30_000, source?: ResolvedSource): Promise<BuildResult> {
  const group = groupOf(names[0]!);
  let plan = source ? planSource(group, versions[group], await sourceTree(source, log), source.digest) : await planFor(group, versions);
  if (group === 'k0s') plan = await prepareK0s(plan, versions, log);
  const recipe = await recipeOf(plan);
  const env = goEnv({ CGO_ENABLED: plan.cgo ? '1' : '0' });
  const base = ['build', '-trimpath', ...(plan.tags.length ? ['-tags', plan.tags.join(',')] : []), '-ldflags', plan.ldflags.join(' ')];
  // One invocation for packages whose default binary name is already right; others get -o FILE.
  const sameName = names.filter((n) => defaultBinaryName(GO_PACKAGES[n]) === n);
  const renamed = names.filter((n) => !sameName.includes(n));
  const invocations: string[][] = [];
  if (sameName.length > 0) invocations.push([...base, '-o', `${outDir}/`, ...sameName.map((n) => GO_PACKAGES[n])]);
  for (const n of renamed) invocations.push([...base, '-o', join(outDir, n), GO_PACKAGES[n]]);

  const started = Date.now();
  const label = `${group} ${plan.version} (${names.join(', ')})`;
  log.step(`go build ${label}`);
  const timer = setInterval(() => log.info(`  still building ${label}: ${fmtElapsed(Date.now() - started)} elapsed`), progressMs);
  timer.unref();
  try {
    for (const args of invocations) {
      await go(args, { cwd: plan.moduleDir, env, step: `build ${group} ${plan.version}`, onLine: (l) => { if (/^go: downloading /.test(l)) log.info(`  ${l}`); } });
    }
  } finally {
    clearInterval(timer);
  }
  const seconds = (Date.now() - started) / 1000;
  log.info(`  built ${label} in ${fmtElapsed(seconds * 1000)}`);
  const files = new Map<ComponentName, string>();
  for (const n of names) {
    const f = join(outDir, n);
    if (!existsSync(f)) throw new StepError(`build ${group} ${plan.version}`, `go build succeeded but ${f} is missing`);
    files.set(n, f);
  }
  return { files, recipe, moduleDir: plan.moduleDir, seconds };
}

/** The recipe a fresh build would have now, to tell whether a cached build is stale. */
export async function currentRecipe(group: ComponentGroup, versions: VersionSet, source?: ResolvedSource): Promise<string | undefined> {
  if (sourceRecipe(group)) return source ? recipeOf(planSource(group, versions[group], source.path, source.digest)) : undefined;
  if (group === 'k0s' && !existsSync(join(cacheDir(), 'gosrc', `k0s-${versions.k0s}`, 'versions.json'))) return undefined;
  return recipeOf(await planFor(group, versions));
}
