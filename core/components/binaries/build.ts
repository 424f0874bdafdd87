// Builds component binaries from Go modules: the offline path. Module and build caches stay
// under ~/.cache (GOMODCACHE=~/.cache/hardwire/gomod, GOCACHE=~/.cache/go-build), never in git.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InputError, StepError } from '../../../lib/errors.ts';
import type { Logger } from '../../../lib/log.ts';
import { repoRoot } from '../../../lib/paths.ts';
import { GO_PACKAGES, groupOf, type VersionSet } from './catalog.ts';
import { type BinaryGroup, type BinaryName } from '../registry/index.ts';
import { run } from '../../../lib/proc.ts';
import { sourceRecipe, sourceTree, unpackedTree, type ResolvedSource } from './sources.ts';
import { ccBuildPause, pauseRecipe, planPause } from './cc.ts';
import { componentBuildCache, goEnv } from './go-env.ts';
import { TRIPLET, localArch, type Arch } from '../../../lib/arch.ts';

function go(
  args: string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv; step: string; onLine?: (l: string) => void },
) {
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
  goVersionMemo ??= go(['env', 'GOVERSION'], { cwd: repoRoot, step: 'go version' }).then((r) =>
    r.stdout.trim(),
  );
  return goVersionMemo;
}

/** How one group is built: module directory, packages, tags, ldflags, cgo. */
export interface BuildPlan {
  group: BinaryGroup;
  version: string;
  moduleDir: string;
  tags: string[];
  ldflags: string[];
  /** -gcflags, e.g. all=-N -l for a debug build (empty: the default optimised build). */
  gcflags?: string;
  cgo: boolean;
  /** Files whose content decides the result (go.mod, go.sum, ...). */
  inputs: string[];
  /** Extra text that decides the result (e.g. the k0s commit). */
  salt: string;
  /** GOARCH; this machine's unless a host of another architecture needs it. */
  arch: Arch;
}

function k8sLdflags(v: string): string[] {
  const m = /^v(\d+)\.(\d+)\.\d+$/.exec(v);
  if (!m) throw new InputError('kubernetesVersion', `${v} is not vMAJOR.MINOR.PATCH`);
  const flags = ['-s', '-w'];
  // The same variables Kubernetes' hack/lib/version.sh sets, in both version packages.
  for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) {
    flags.push(
      '-X',
      `${pkg}.gitVersion=${v}`,
      '-X',
      `${pkg}.gitMajor=${m[1]}`,
      '-X',
      `${pkg}.gitMinor=${m[2]}`,
      '-X',
      `${pkg}.gitTreeState=clean`,
      '-X',
      `${pkg}.buildDate=1970-01-01T00:00:00Z`,
    );
  }
  return flags;
}

async function requireInGoMod(
  moduleDir: string,
  modulePath: string,
  version: string,
  field: string,
): Promise<void> {
  const text = await readFile(join(moduleDir, 'go.mod'), 'utf8');
  const m = new RegExp(
    `^\\s*(?:require\\s+)?${modulePath.replace(/[.]/g, '\\.')}\\s+(\\S+)`,
    'm',
  ).exec(text);
  if (!m) throw new StepError('go module', `${moduleDir}/go.mod does not require ${modulePath}`);
  if (m[1] !== version) {
    throw new InputError(
      field,
      `${version} cannot be built: ${moduleDir.replace(`${repoRoot}/`, '')}/go.mod pins ${modulePath} ${m[1]}; use "components fetch", --from DIR, or regenerate that module`,
    );
  }
}

/** How a group with a committed module under components/go/<group> is built, besides its module. */
interface ModuleRecipe {
  /** Modules its go.mod must require at the group's version, so a stale go.mod is refused before a long build. */
  modules: string[];
  tags?: string[];
  cgo?: boolean;
  ldflags?: (versions: VersionSet) => string[];
  /** Files of the module that decide the build (default go.mod, go.sum, tools.go). */
  inputs?: string[];
  gcflags?: string;
  /** The module directory under components/go, when it is not named after the group. */
  dir?: BinaryGroup;
}

const MODULE_RECIPES: Partial<Record<BinaryGroup, ModuleRecipe>> = {
  // etcd's version is a constant in go.etcd.io/etcd/api/v3/version; GitSHA is the only ldflag its
  // build script sets, and the release commit is not known here, so it keeps its default.
  etcd: {
    modules: [
      'go.etcd.io/etcd/server/v3',
      'go.etcd.io/etcd/etcdctl/v3',
      'go.etcd.io/etcd/etcdutl/v3',
    ],
  },
  'k0s-etcd': { modules: ['go.etcd.io/etcd/server/v3'] },
  konnectivity: { modules: ['sigs.k8s.io/apiserver-network-proxy'] },
  // kubelet and kube-proxy: as the control plane's binaries, from a module of their own.
  'kubernetes-node': {
    modules: ['k8s.io/kubernetes'],
    tags: ['providerless'],
    ldflags: (v) => k8sLdflags(v['kubernetes-node']),
  },
  // containerd's Makefile stamps version.Version and version.Revision. Without cgo: the shim is
  // built that way upstream (containerd_build_shim_go_cgo_enabled = 0 in k0s), and the daemon
  // loses only the btrfs snapshotter, which needs cgo.
  containerd: {
    modules: ['github.com/containerd/containerd/v2'],
    ldflags: (v) => [
      '-s',
      '-w',
      '-X',
      `github.com/containerd/containerd/v2/version.Version=${v.containerd}`,
      '-X',
      `github.com/containerd/containerd/v2/version.Revision=${v.containerdRevision}`,
    ],
  },
  // As k0s builds it (runc_build_go_tags "seccomp", -extldflags=-static), with runc's own static
  // tags (netgo, osusergo): cgo against libseccomp.a (apt: libseccomp-dev, pkg-config).
  runc: {
    modules: ['github.com/opencontainers/runc'],
    tags: ['seccomp', 'netgo', 'osusergo'],
    cgo: true,
    ldflags: (v) => [
      '-s',
      '-w',
      '-X',
      `main.version=${v.runc.replace(/^v/, '')}`,
      '-extldflags=-static',
    ],
  },
  // The plugins' build_linux.sh stamps buildversion.BuildVersion.
  'cni-plugins': {
    modules: ['github.com/containernetworking/plugins'],
    ldflags: (v) => [
      '-s',
      '-w',
      '-X',
      `github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=${v['cni-plugins']}`,
    ],
  },
  // CoreDNS's version is a constant (coremain/version.go); its Makefile sets only GitCommit.
  coredns: { modules: ['github.com/coredns/coredns'] },
  // hardwire's own main package (components/go/imagebuild/main.go) on go-containerregistry.
  imagebuild: {
    modules: ['github.com/google/go-containerregistry'],
    inputs: ['go.mod', 'go.sum', 'main.go'],
  },
  // hardwire's own webhook: stdlib only (no go.sum), cgo off like every module group, so it runs
  // from the empty base; the catalog's version goes in for its -version probe.
  webhook: {
    modules: [],
    inputs: ['go.mod', 'main.go'],
    ldflags: (v) => ['-s', '-w', '-X', `main.version=${v.webhook}`],
  },
  delve: { modules: ['github.com/go-delve/delve'], ldflags: () => [] },
  // kube-vip's Makefile stamps main.Version and main.Build (the commit, not known here).
  'kube-vip': {
    modules: ['github.com/kube-vip/kube-vip'],
    ldflags: (v) => ['-s', '-w', '-X', `main.Version=${v['kube-vip']}`],
  },
  // distribution's Makefile stamps version.version, version.revision and version.mainpkg (its
  // GO_LDFLAGS); the release commit is not known here, so revision keeps its default ("").
  registry: {
    modules: ['github.com/distribution/distribution/v3'],
    ldflags: (v) => [
      '-s',
      '-w',
      '-X',
      `github.com/distribution/distribution/v3/version.version=${v.registry}`,
      '-X',
      'github.com/distribution/distribution/v3/version.mainpkg=github.com/distribution/distribution/v3',
    ],
  },
  // metrics-server's Makefile stamps client-go's version package (VERSION_LDFLAGS; -w, symbols kept
  // as upstream's are not: -s here as every group); `--version` prints gitVersion.
  'metrics-server': {
    modules: ['sigs.k8s.io/metrics-server'],
    ldflags: (v) => [
      '-s',
      '-w',
      '-X',
      `k8s.io/client-go/pkg/version.gitVersion=${v['metrics-server']}`,
      '-X',
      'k8s.io/client-go/pkg/version.buildDate=1970-01-01T00:00:00Z',
    ],
  },
  // cri-tools' Makefile stamps pkg/version.Version without the "v" (VERSION from git describe | sed 's/^v//').
  'cri-tools': {
    modules: ['sigs.k8s.io/cri-tools'],
    ldflags: (v) => [
      '-s',
      '-w',
      '-X',
      `sigs.k8s.io/cri-tools/pkg/version.Version=${v['cri-tools'].replace(/^v/, '')}`,
    ],
  },
};

/**
 * The committed module that builds group@version: core/components/go/<group>@<version> when there
 * is one (a second version, e.g. an upgrade's target), else core/components/go/<group>, whose
 * go.mod pins the first. requireInGoMod refuses a module that pins another version.
 */
export function moduleDirOf(group: BinaryGroup, version: string): string {
  const versioned = join(repoRoot, 'core', 'components', 'go', `${group}@${version}`);
  return existsSync(join(versioned, 'go.mod'))
    ? versioned
    : join(repoRoot, 'core', 'components', 'go', group);
}

/** Debug builds (issue 25) and the release group each one varies. */
const DEBUG_OF: Partial<Record<BinaryGroup, BinaryGroup>> = {
  'kubernetes-debug': 'kubernetes',
  'etcd-debug': 'etcd',
};

/**
 * A debug build for delve: the release group's module, tags and stamps, with no inlining or
 * optimisation, and without -s -w, which would strip the DWARF delve reads. -trimpath still names
 * files module@version/path.
 */
function debugRecipe(release: BinaryGroup): ModuleRecipe {
  // kubernetes' own plan is planFor's first case, with kubernetesVersion as its field.
  const r: ModuleRecipe =
    release === 'kubernetes'
      ? {
          modules: ['k8s.io/kubernetes'],
          tags: ['providerless'],
          ldflags: (v) => k8sLdflags(v.kubernetes),
        }
      : MODULE_RECIPES[release]!;
  const stripped = (v: VersionSet) =>
    (r.ldflags?.(v) ?? []).filter((f) => f !== '-s' && f !== '-w');
  return { ...r, dir: release, gcflags: 'all=-N -l', ldflags: stripped };
}

export async function planFor(
  group: BinaryGroup,
  versions: VersionSet,
  arch: Arch = localArch(),
): Promise<BuildPlan> {
  if (group === 'kubernetes') {
    const moduleDir = moduleDirOf('kubernetes', versions.kubernetes);
    await requireInGoMod(moduleDir, 'k8s.io/kubernetes', versions.kubernetes, 'kubernetesVersion');
    return {
      group,
      version: versions.kubernetes,
      moduleDir,
      tags: ['providerless'],
      ldflags: k8sLdflags(versions.kubernetes),
      cgo: false,
      inputs: ['go.mod', 'go.sum', 'tools.go'].map((f) => join(moduleDir, f)),
      salt: '',
      arch,
    };
  }
  // Groups with a committed module under components/go/<group>.
  const debugOf = DEBUG_OF[group];
  const recipe = debugOf ? debugRecipe(debugOf) : MODULE_RECIPES[group];
  if (!recipe)
    throw new StepError(
      `build ${group}`,
      `${group} is built from its source archive; give it with --source FILE|DIR`,
    );
  const moduleDir = moduleDirOf(recipe.dir ?? group, versions[group]);
  for (const m of recipe.modules)
    await requireInGoMod(moduleDir, m, versions[group], `${group} version`);
  return {
    group,
    version: versions[group],
    moduleDir,
    tags: recipe.tags ?? [],
    ldflags: recipe.ldflags?.(versions) ?? ['-s', '-w'],
    cgo: recipe.cgo ?? false,
    ...(recipe.gcflags ? { gcflags: recipe.gcflags } : {}),
    inputs: (recipe.inputs ?? ['go.mod', 'go.sum', 'tools.go']).map((f) => join(moduleDir, f)),
    salt: '',
    arch,
  };
}

/** A group built from a source tree (sources.ts): the tree is the module; its digest salts the recipe. */
function planSource(
  group: BinaryGroup,
  version: string,
  tree: string,
  digest: string,
  arch: Arch,
): BuildPlan {
  const r = sourceRecipe(group)!;
  return {
    arch,
    group,
    version,
    moduleDir: tree,
    tags: r.tags,
    ldflags: r.ldflags(version, tree),
    cgo: false,
    inputs: [],
    salt: `${group}@${digest}`,
  };
}

/** Hash of everything that decides a build's output. A cached build with another recipe is stale. */
export async function recipeOf(plan: BuildPlan): Promise<string> {
  const h = createHash('sha256');
  h.update(
    JSON.stringify({
      goVersion: await goVersion(),
      tags: plan.tags,
      ldflags: plan.ldflags,
      cgo: plan.cgo,
      salt: plan.salt,
      ...(plan.gcflags ? { gcflags: plan.gcflags } : {}),
      // This machine's builds keep the recipe they had before other architectures were built.
      ...(plan.arch === localArch() ? {} : { arch: plan.arch }),
    }),
  );
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
  files: Map<BinaryName, string>;
  recipe: string;
  moduleDir: string;
  seconds: number;
}

/**
 * Runs go build for some binaries of one group into outDir, printing progress every
 * progressMs (default 30 s) because a cold Kubernetes build takes minutes.
 */
export async function goBuild(
  names: BinaryName[],
  versions: VersionSet,
  outDir: string,
  log: Logger,
  opts: { progressMs?: number; source?: ResolvedSource; arch?: Arch } = {},
): Promise<BuildResult> {
  const { progressMs = 30_000, source, arch = localArch() } = opts;
  const group = groupOf(names[0]!);
  if (group === 'pause') {
    const started = Date.now();
    const p = await planPause(versions, arch);
    log.step(`cc pause ${p.version} for ${arch} (${p.source})`);
    const file = await ccBuildPause(p, outDir);
    const seconds = (Date.now() - started) / 1000;
    log.info(`  built pause ${p.version} in ${fmtElapsed(seconds * 1000)}`);
    return {
      files: new Map([['pause' as BinaryName, file]]),
      recipe: await pauseRecipe(p),
      moduleDir: p.moduleDir,
      seconds,
    };
  }
  const plan = source
    ? planSource(group, versions[group], await sourceTree(source, log), source.digest, arch)
    : await planFor(group, versions, arch);
  const recipe = await recipeOf(plan);
  const env = goEnv({
    CGO_ENABLED: plan.cgo ? '1' : '0',
    GOCACHE: componentBuildCache(),
    GOOS: 'linux',
    GOARCH: plan.arch,
    ...(plan.cgo && plan.arch !== localArch() ? crossCgo(plan.arch) : {}),
  });
  const base = [
    'build',
    '-trimpath',
    ...(plan.tags.length ? ['-tags', plan.tags.join(',')] : []),
    ...(plan.gcflags ? [`-gcflags=${plan.gcflags}`] : []),
    '-ldflags',
    plan.ldflags.join(' '),
  ];
  // One invocation for packages whose default binary name is already right; others get -o FILE.
  const sameName = names.filter((n) => defaultBinaryName(GO_PACKAGES[n]) === n);
  const renamed = names.filter((n) => !sameName.includes(n));
  const invocations: string[][] = [];
  if (sameName.length > 0)
    invocations.push([...base, '-o', `${outDir}/`, ...sameName.map((n) => GO_PACKAGES[n])]);
  for (const n of renamed) invocations.push([...base, '-o', join(outDir, n), GO_PACKAGES[n]]);

  const started = Date.now();
  const label = `${group} ${plan.version}${plan.arch === localArch() ? '' : ` for ${plan.arch}`} (${names.join(', ')})`;
  log.step(`go build ${label}`);
  const timer = setInterval(
    () => log.info(`  still building ${label}: ${fmtElapsed(Date.now() - started)} elapsed`),
    progressMs,
  );
  timer.unref();
  try {
    for (const args of invocations) {
      await go(args, {
        cwd: plan.moduleDir,
        env,
        step: `build ${group} ${plan.version}`,
        onLine: (l) => {
          if (/^go: downloading /.test(l)) log.info(`  ${l}`);
        },
      });
    }
  } finally {
    clearInterval(timer);
  }
  const seconds = (Date.now() - started) / 1000;
  log.info(`  built ${label} in ${fmtElapsed(seconds * 1000)}`);
  const files = new Map<BinaryName, string>();
  for (const n of names) {
    const f = join(outDir, n);
    if (!existsSync(f))
      throw new StepError(
        `build ${group} ${plan.version}`,
        `go build succeeded but ${f} is missing`,
      );
    files.set(n, f);
  }
  return { files, recipe, moduleDir: plan.moduleDir, seconds };
}

/** The recipe a fresh build would have now, to tell whether a cached build is stale. */
export async function currentRecipe(
  group: BinaryGroup,
  versions: VersionSet,
  source?: ResolvedSource,
  arch: Arch = localArch(),
): Promise<string | undefined> {
  if (group === 'pause') return pauseRecipe(await planPause(versions, arch));
  if (sourceRecipe(group)) {
    // The recipe reads the tree (k0s's Makefile variables): an archive not unpacked yet cannot tell.
    const tree = source ? unpackedTree(source) : undefined;
    return source && tree
      ? recipeOf(planSource(group, versions[group], tree, source.digest, arch))
      : undefined;
  }
  return recipeOf(await planFor(group, versions, arch));
}

/**
 * cgo for another architecture (runc's libseccomp): Debian's cross compiler, and pkg-config reading
 * that architecture's multiarch libraries (scripts/setup.sh: gcc-<triplet>, libseccomp-dev:<arch>).
 */
function crossCgo(arch: Arch): Record<string, string> {
  return {
    CC: `${TRIPLET[arch]}-gcc`,
    PKG_CONFIG_LIBDIR: `/usr/lib/${TRIPLET[arch]}/pkgconfig:/usr/share/pkgconfig`,
  };
}
