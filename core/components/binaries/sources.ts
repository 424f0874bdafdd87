// Source archives: a tool whose module the Go proxy refuses by name (kube-bench; k0s is in the same
// situation) is built from a `git archive` of its release tag instead. The archive is found in this
// order: --source FILE|DIR, the group's environment variable, ../shared/sources/<file> beside the
// repo. An archive must hash to the pinned sha256; it is unpacked once under
// $HARDWIRE_CACHE/gosrc/<dir>/ and never into the repo. A directory (an unpacked tree) is taken as
// the operator's own: it is hashed file by file, and a tree that is not the pinned one gets a warning.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import {
  lstat,
  mkdir,
  readFile,
  readdir,
  readlink,
  rename,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { InputError, StepError } from '../../../lib/errors.ts';
import type { Logger } from '../../../lib/log.ts';
import { cacheDir, expandHome, repoRoot } from '../../../lib/paths.ts';
import { run } from '../../../lib/proc.ts';
import { sha256File } from './cache.ts';
import { type BinaryGroup } from '../registry/index.ts';

/** One pinned release tag of a project built from its source archive. */
export interface PinnedSource {
  /** `git archive` file name; it unpacks to one top-level directory named like it without .tar.gz. */
  file: string;
  sha256: string;
  tag: string;
  commit: string;
  /** sha256 of the unpacked tree (treeDigest): tells an unchanged directory from an edited one. */
  treeDigest: string;
}

/** How a group is built from its tree: everything that decides the binary besides the tree itself. */
export interface SourceRecipe {
  /** The module path go.mod must declare, so a wrong directory is refused before a long build. */
  module: string;
  /** Environment variable naming an archive or a tree. */
  env: string;
  tags: string[];
  /** From the version and the unpacked tree (k0s takes its component versions from its Makefile). */
  ldflags: (version: string, tree: string) => string[];
  pins: Record<string, PinnedSource>;
}

/** `name = value` lines of a Makefile (k0s's embedded-bins/Makefile.variables). */
export function makeVariables(file: string): Record<string, string> {
  const vars: Record<string, string> = {};
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  for (const [, k, v] of text.matchAll(/^(\w+)\s*[:?]?=\s*(\S+)\s*$/gm)) if (k && v) vars[k] = v;
  return vars;
}

/**
 * k0s's LD_FLAGS as its Makefile builds them (Makefile, "LD_FLAGS +="): k0s reports and checks the
 * component versions it was built with. BUILD_DATE is the tree's commit time (git archive stamps
 * every file with it), as the Makefile's SOURCE_DATE_EPOCH would give; the EULA notice and the
 * telemetry token stay empty, as in a build outside k0s's CI.
 */
function k0sLdflags(version: string, tree: string): string[] {
  const v = makeVariables(join(tree, 'embedded-bins', 'Makefile.variables'));
  const need = (k: string) => {
    if (!v[k])
      throw new StepError(
        `build k0s ${version}`,
        `${tree}/embedded-bins/Makefile.variables has no ${k}; is this a k0s source tree?`,
      );
    return v[k]!;
  };
  const [containerd, revision] = need('containerd_version_and_rev').split('@');
  const kube = need('kubernetes_version');
  const [major, minor] = kube.split('.');
  const date = new Date(statSync(join(tree, 'go.mod')).mtimeMs)
    .toISOString()
    .replace(/\.\d+Z$/, 'Z');
  const x = (k: string, val: string) => ['-X', `${k}=${val}`];
  return [
    '-w',
    '-s',
    ...x('github.com/k0sproject/k0s/pkg/build.Version', version),
    ...x('github.com/k0sproject/k0s/pkg/build.RuncVersion', need('runc_version')),
    ...x('github.com/k0sproject/k0s/pkg/build.ContainerdVersion', containerd!),
    ...x('github.com/k0sproject/k0s/pkg/build.KubernetesVersion', kube),
    ...x('github.com/k0sproject/k0s/pkg/build.KineVersion', need('kine_version')),
    ...x('github.com/k0sproject/k0s/pkg/build.EtcdVersion', need('etcd_version')),
    ...x('github.com/k0sproject/k0s/pkg/build.KonnectivityVersion', need('konnectivity_version')),
    ...x('k8s.io/component-base/version.gitVersion', `v${kube}`),
    ...x('k8s.io/component-base/version.gitMajor', major!),
    ...x('k8s.io/component-base/version.gitMinor', minor!),
    ...x('k8s.io/component-base/version.buildDate', date),
    ...x('k8s.io/component-base/version.gitCommit', 'not_available'),
    ...x('github.com/containerd/containerd/v2/version.Version', containerd!),
    ...x('github.com/containerd/containerd/v2/version.Revision', revision ?? ''),
    '-extldflags=-static',
  ];
}

/** Groups built from a source archive: the Go module proxy refuses these modules by name. */
export const SOURCE_RECIPES: Partial<Record<BinaryGroup, SourceRecipe>> = {
  k0s: {
    module: 'github.com/k0sproject/k0s',
    env: 'HARDWIRE_K0S_SOURCE',
    // As its Makefile builds the binary, minus the embedded component binaries (no `noembedbins`
    // tag is needed: without bindata the binary stages what it finds in its bin dir or on PATH).
    tags: ['osusergo'],
    ldflags: k0sLdflags,
    pins: {
      'v1.36.3+k0s.2': {
        file: 'k0s-v1.36.3+k0s.2.tar.gz',
        tag: 'v1.36.3+k0s.2',
        commit: 'a949c71ba5b77e28367194b4b8c975b0f5fd5c79',
        sha256: 'e4f6efb31bc8f8b4865a2c296e7eebb7550415f744d1a35f84383ecc0fccbac1',
        treeDigest: '63e8210de89a561c6b7c15c31bfbc842c7ab0374d0d436250fd684035c70f84e',
      },
    },
  },
  'kube-bench': {
    module: 'github.com/aquasecurity/kube-bench',
    env: 'HARDWIRE_KUBE_BENCH_SOURCE',
    // As the project's .goreleaser.yml builds its release binaries (cgo off, static, version stamped).
    tags: ['osusergo', 'netgo', 'static_build'],
    ldflags: (v) => [
      '-s',
      '-w',
      '-X',
      `github.com/aquasecurity/kube-bench/cmd.KubeBenchVersion=${v.replace(/^v/, '')}`,
    ],
    pins: {
      'v0.15.6': {
        file: 'kube-bench-v0.15.6.tar.gz',
        tag: 'v0.15.6',
        commit: '92e522b9ac82d4253e8b7582de1e75f5dae1f4b5',
        sha256: '397dc42f6ed366f10545155baeb0cc547d24fd1bbd16b43f73bc3ee0e5c9c2dc',
        treeDigest: '4b5784cdf49452c32618eb45fce69a60d4db8b2ae0bff317d20d11711a303403',
      },
    },
  },
};

export function sourceRecipe(group: BinaryGroup): SourceRecipe | undefined {
  return SOURCE_RECIPES[group];
}

/** Where the shared source archives sit when hardwire is checked out next to them. */
export function sharedSourcesDir(): string {
  return resolve(repoRoot, '..', 'shared', 'sources');
}

/** A source found and checked, before unpacking. */
export interface ResolvedSource {
  group: BinaryGroup;
  version: string;
  kind: 'archive' | 'dir';
  path: string;
  /** Archive sha256, or the tree digest of a directory: what the build recipe is salted with. */
  digest: string;
  /** How it was found, for messages: "--source", the variable's name, or the shared directory. */
  via: string;
}

function pinFor(group: BinaryGroup, version: string): { recipe: SourceRecipe; pin: PinnedSource } {
  const recipe = sourceRecipe(group);
  const pin = recipe?.pins[version];
  if (!recipe || !pin)
    throw new InputError(
      '--source',
      `${group} ${version} has no pinned source archive in core/components/binaries/sources.ts; build a pinned version or use "components fetch"`,
    );
  return { recipe, pin };
}

/**
 * The source to build group@version from: explicit (--source), then the environment variable, then
 * the shared archive beside the repo. Undefined when there is none (the caller downloads instead).
 */
export async function resolveSource(
  group: BinaryGroup,
  version: string,
  explicit: string | undefined,
  log: Logger,
): Promise<ResolvedSource | undefined> {
  const { recipe, pin } = pinFor(group, version);
  const fromEnv = process.env[recipe.env];
  const [given, via] =
    explicit !== undefined
      ? [explicit, '--source']
      : fromEnv
        ? [fromEnv, recipe.env]
        : [undefined, ''];
  if (given === undefined) {
    const shared = join(sharedSourcesDir(), pin.file);
    return existsSync(shared)
      ? checkArchive(group, version, shared, 'the shared sources directory', pin)
      : undefined;
  }
  const p = expandHome(given);
  const abs = isAbsolute(p) ? p : resolve(process.cwd(), p);
  const st = await stat(abs).catch(() => undefined);
  if (!st)
    throw new InputError(
      via,
      `${abs} does not exist; point it at ${pin.file} or at its unpacked tree`,
    );
  if (st.isFile()) return checkArchive(group, version, abs, via, pin);
  if (!st.isDirectory())
    throw new InputError(
      via,
      `${abs} is neither a file nor a directory; point it at ${pin.file} or at its unpacked tree`,
    );
  await checkModule(abs, recipe.module, via);
  const digest = await treeDigest(abs);
  if (digest !== pin.treeDigest)
    log.warn(
      `${abs} is not the pinned ${group} ${version} tree (tree digest ${digest.slice(0, 16)}…); building it as given`,
    );
  return { group, version, kind: 'dir', path: abs, digest, via };
}

async function checkArchive(
  group: BinaryGroup,
  version: string,
  file: string,
  via: string,
  pin: PinnedSource,
): Promise<ResolvedSource> {
  const sha = await sha256File(file);
  if (sha !== pin.sha256) {
    throw new InputError(
      via,
      `${file} has sha256 ${sha}, not the pinned ${pin.file} (${pin.sha256}, tag ${pin.tag}); pass the unchanged archive, or an unpacked tree as a directory`,
    );
  }
  return { group, version, kind: 'archive', path: file, digest: sha, via };
}

async function checkModule(dir: string, module: string, field: string): Promise<void> {
  const gomod = await readFile(join(dir, 'go.mod'), 'utf8').catch(() => '');
  const declared = /^module\s+(\S+)/m.exec(gomod)?.[1];
  if (declared !== module) {
    throw new InputError(
      field,
      `${dir} is not a ${module} tree (${declared ? `its go.mod declares ${declared}` : 'no go.mod'}); point it at the unpacked source`,
    );
  }
}

/**
 * sha256 over every file, symlink and executable bit below dir, in path order (.git skipped): the
 * same for a tree however it was unpacked, different after any edit.
 */
export async function treeDigest(dir: string): Promise<string> {
  const lines: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const name of (await readdir(d)).sort()) {
      if (name === '.git') continue;
      const p = join(d, name);
      const st = await lstat(p);
      const rel = relative(dir, p);
      if (st.isDirectory()) await walk(p);
      else if (st.isSymbolicLink()) lines.push(`l ${await readlink(p)} ${rel}`);
      else if (st.isFile())
        lines.push(`${st.mode & 0o111 ? 'x' : 'f'} ${await sha256File(p)} ${rel}`);
    }
  };
  await walk(dir);
  return createHash('sha256').update(lines.join('\n')).digest('hex');
}

/** The tree to build in: a directory as given, an archive unpacked once into the cache. */
export async function sourceTree(src: ResolvedSource, log: Logger): Promise<string> {
  if (src.kind === 'dir') return src.path;
  const { pin } = pinFor(src.group, src.version);
  const top = pin.file.replace(/\.tar\.gz$/, '');
  const dest = join(cacheDir(), 'gosrc', top);
  const marker = join(dest, '.hardwire-source.json');
  const had = await readFile(marker, 'utf8')
    .then((t) => JSON.parse(t) as { sha256?: string })
    .catch(() => undefined);
  if (had?.sha256 === src.digest) return dest;
  log.info(`  unpacking ${src.path} into ${dest}`);
  const scratch = join(
    cacheDir(),
    'tmp',
    `${top}-${process.pid}-${randomBytes(4).toString('hex')}`,
  );
  await mkdir(scratch, { recursive: true });
  try {
    await run('tar', ['-xzf', src.path, '-C', scratch, '--no-same-owner'], {
      step: `unpack ${pin.file}`,
    });
    if (!existsSync(join(scratch, top, 'go.mod')))
      throw new StepError(
        `unpack ${pin.file}`,
        `${pin.file} did not unpack to ${top}/ with a go.mod`,
      );
    await writeFile(
      join(scratch, top, '.hardwire-source.json'),
      `${JSON.stringify({ file: pin.file, sha256: src.digest, tag: pin.tag, commit: pin.commit }, null, 2)}\n`,
    );
    await mkdir(dirname(dest), { recursive: true });
    await rm(dest, { recursive: true, force: true });
    await rename(join(scratch, top), dest);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return dest;
}

/** The cache's unpacked copy of an archive (or the directory itself), if it is there and current. */
export function unpackedTree(src: ResolvedSource): string | undefined {
  if (src.kind === 'dir') return src.path;
  const { pin } = pinFor(src.group, src.version);
  const dest = join(cacheDir(), 'gosrc', pin.file.replace(/\.tar\.gz$/, ''));
  try {
    const had = JSON.parse(readFileSync(join(dest, '.hardwire-source.json'), 'utf8')) as {
      sha256?: string;
    };
    return had.sha256 === src.digest ? dest : undefined;
  } catch {
    return undefined;
  }
}

/** "kube-bench-v0.15.6.tar.gz (sha256 397dc42f…, tag v0.15.6)": the manifest's origin. */
export function describeSource(src: ResolvedSource): string {
  return src.kind === 'archive'
    ? `${src.path} (sha256 ${src.digest})`
    : `${src.path} (tree ${src.digest})`;
}
