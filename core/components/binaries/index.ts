// The one way downstream code (wire, compare, the flag map) gets a component binary.
// Sources in order of preference: a local directory, the verified cache, an official release
// download, a Go module build. A cached binary whose sha256 no longer matches its manifest is
// discarded and replaced, never handed out.
import { rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { InputError, StepError } from '../../../lib/errors.ts';
import type { Logger } from '../../../lib/log.ts';
import * as cache from './cache.ts';
import {
  DEFAULT_KUBERNETES,
  ETCD_STEPS,
  VERSION_TABLE,
  WORKER_GROUPS,
  groupOf,
  versionOf,
  versionsFor,
  type SourceKind,
  type VersionSet,
} from './catalog.ts';
import { BINARY_NAMES, type BinaryGroup, type BinaryName } from '../registry/index.ts';
import { currentRecipe, goBuild } from './build.ts';
import { DownloadError, fetchGroup, type ReleaseUrls } from './fetch.ts';
import { localBinary, resolveFromDir } from './local.ts';
import { probeVersion } from './verify.ts';
import { localArch, type Arch } from '../../../lib/arch.ts';
import { assetProblem, assetsOf, installAssets } from './assets.ts';
import {
  describeSource,
  resolveSource,
  sharedSourcesDir,
  sourceRecipe,
  type ResolvedSource,
} from './sources.ts';

export type { SourceKind } from './catalog.ts';

export interface EnsureOptions {
  /** Kubernetes release that picks every version (default v1.36.3); etcd and k0s follow from it. */
  kubernetesVersion?: string;
  /** Exact version of the binary asked for (e.g. "v3.6.8" for etcd); must be in the version table. */
  version?: string;
  /** Directory holding the binaries (--from DIR or inventory components.from). */
  from?: string;
  /**
   * Where to get a missing binary: "auto" (default) downloads and, if the release server cannot
   * be reached, builds; "fetch" only downloads; "build" only builds, and also replaces a cached
   * binary that was not built by the current recipe (go.mod, go.sum, flags, Go version).
   */
  source?: 'auto' | 'fetch' | 'build';
  /** Rebuild or re-download even if the cache holds a verified binary. */
  force?: boolean;
  /** Re-hash cached binaries even when their stat matches the last verification (wire --verify-hashes). */
  verifyHashes?: boolean;
  log?: Logger;
  /** Release base URLs (else HARDWIRE_*_RELEASE_URL, else the official servers). */
  urls?: Partial<ReleaseUrls>;
  /**
   * For a group built from a source archive (kube-bench): the archive or its unpacked tree
   * (--source FILE|DIR); else its environment variable, else ../shared/sources (sources.ts).
   */
  sourcePath?: string;
  /** The architecture to build for (default this machine's); another one is cross-built and cached apart. */
  arch?: Arch;
}

export interface EnsuredBinary {
  name: BinaryName;
  version: string;
  arch: Arch;
  path: string;
  sha256: string;
  source: SourceKind;
  origin: string;
  /** True if this call built, downloaded or copied it; false if the cache already had it. */
  acquired: boolean;
}

const BUILD_ONLY: readonly BinaryGroup[] = [
  'konnectivity',
  'kubernetes-debug',
  'etcd-debug',
  'delve',
];

/** Groups whose module is hardwire's own code (components/go/<group>/main.go), versioned by the catalog, not by their code. */
const OWN_MAINS: readonly BinaryGroup[] = ['imagebuild', 'webhook'];

const silent: Logger = { info: () => {}, warn: () => {}, step: () => {} };

function versionSetFor(name: BinaryName, opts: EnsureOptions): VersionSet {
  if (opts.version === undefined) return versionsFor(opts.kubernetesVersion ?? DEFAULT_KUBERNETES);
  const group = groupOf(name);
  if (group === 'etcd' && ETCD_STEPS.includes(opts.version))
    return { ...versionsFor(opts.kubernetesVersion ?? DEFAULT_KUBERNETES), etcd: opts.version };
  const rows = VERSION_TABLE.filter(
    (r) =>
      r[group] === opts.version &&
      (!opts.kubernetesVersion || r.kubernetes === opts.kubernetesVersion),
  );
  if (rows.length === 0) {
    throw new InputError(
      'version',
      `${name} ${opts.version} is not in the version table (known: ${[...new Set([...VERSION_TABLE.map((r) => r[group]), ...(group === 'etcd' ? ETCD_STEPS : [])])].join(', ')})`,
    );
  }
  return rows[0]!;
}

export async function ensureBinary(
  name: BinaryName,
  opts: EnsureOptions = {},
): Promise<EnsuredBinary> {
  const [one] = await ensureAll([name], opts);
  return one!;
}

function toResult(m: cache.Manifest, path: string, acquired: boolean): EnsuredBinary {
  return {
    name: m.name,
    version: m.version,
    arch: m.arch ?? localArch(),
    path,
    sha256: m.sha256,
    source: m.source,
    origin: m.origin,
    acquired,
  };
}

/** Ensures every named binary, building each group (one go build) at most once. */
export async function ensureAll(
  names: readonly BinaryName[],
  opts: EnsureOptions = {},
): Promise<EnsuredBinary[]> {
  const log = opts.log ?? silent;
  const wanted = [...new Set(names)];
  for (const n of wanted)
    if (!(BINARY_NAMES as readonly string[]).includes(n))
      throw new InputError('name', `unknown component "${n}"`);
  const sets = new Map(wanted.map((n) => [n, versionSetFor(n, opts)] as const));
  // A bad --source is bad input: refused before any lock is waited for or anything is built.
  if (opts.sourcePath !== undefined) {
    for (const n of wanted.filter((x) => sourceRecipe(groupOf(x))))
      await resolveSource(groupOf(n), versionOf(n, sets.get(n)!), opts.sourcePath, silent);
  }

  const foreign = opts.arch !== undefined && opts.arch !== localArch();
  if (opts.from !== undefined && foreign)
    throw new InputError(
      'components.from',
      `a directory of binaries serves this machine's architecture (${localArch()}), and ${opts.arch} was asked for; remove components.from to build every architecture from source`,
    );
  if (opts.from !== undefined) {
    const dir = resolveFromDir(opts.from, '--from');
    const out: EnsuredBinary[] = [];
    for (const n of wanted)
      out.push(await fromLocal(n, versionOf(n, sets.get(n)!), localBinary(dir, n, '--from'), log));
    return out;
  }

  const done = new Map<BinaryName, EnsuredBinary>();
  const missing = new Map<string, BinaryName[]>();
  for (const n of wanted) {
    const hit = await usable(n, sets.get(n)!, opts, log);
    if (hit) done.set(n, hit);
    else {
      const key = `${groupOf(n)}@${versionOf(n, sets.get(n)!)}`;
      missing.set(key, [...(missing.get(key) ?? []), n]);
    }
  }
  for (const group of missing.values()) {
    const set = sets.get(group[0]!)!;
    for (const r of await acquireGroup(group, set, opts, log)) done.set(r.name, r);
  }
  return wanted.map((n) => done.get(n)!);
}

/** A verified cache entry acceptable for these options, or undefined (corrupt ones are discarded). */
async function usable(
  name: BinaryName,
  set: VersionSet,
  opts: EnsureOptions,
  log: Logger,
): Promise<EnsuredBinary | undefined> {
  const version = versionOf(name, set);
  const arch = opts.arch;
  const st = await cache.inspect(name, version, {
    rehash: opts.verifyHashes === true,
    ...(arch ? { arch } : {}),
  });
  if (st.state === 'corrupt') {
    log.warn(
      `cached ${name} ${version} is corrupt: sha256 ${st.actual} does not match its manifest (${st.expected}); discarding it`,
    );
    await cache.discard(name, version, arch);
    return undefined;
  }
  if (st.state !== 'ok' || opts.force) return undefined;
  const m = st.manifest;
  const assets = await assetProblem(name, version);
  if (assets) {
    log.warn(`cached ${name} ${version} cannot be used: ${assets}; acquiring it again`);
    return undefined;
  }
  if (opts.source === 'fetch' && m.source !== 'fetch') return undefined;
  const group = groupOf(name);
  // hardwire's own mains change with the repo under one version: a build from other code is stale.
  if (opts.source === 'build' || (OWN_MAINS.includes(group) && m.source === 'build')) {
    if (m.source !== 'build') return undefined;
    const src = sourceRecipe(group)
      ? await resolveSource(group, version, opts.sourcePath, log)
      : undefined;
    const recipe = await currentRecipe(group, set, src, opts.arch);
    if (recipe !== undefined && recipe !== m.recipe) {
      log.info(
        `  ${name} ${version} was built from another recipe (go.mod, flags or Go changed); rebuilding`,
      );
      return undefined;
    }
  }
  return toResult(m, st.path, false);
}

async function fromLocal(
  name: BinaryName,
  version: string,
  file: string,
  log: Logger,
): Promise<EnsuredBinary> {
  const sha = await cache.sha256File(file);
  const st = await cache.inspect(name, version);
  if (st.state === 'ok' && st.manifest.source === 'local' && st.manifest.sha256 === sha)
    return toResult(st.manifest, st.path, false);
  if (st.state === 'corrupt')
    log.warn(
      `cached ${name} ${version} is corrupt (sha256 ${st.actual}, manifest ${st.expected}); replacing it`,
    );
  const versionOutput = await probeVersion(name, version, file);
  const m = await cache.install(
    file,
    { name, version, source: 'local', origin: file, versionOutput },
    sha,
  );
  for (const a of assetsOf(name)) {
    if (!existsSync(join(dirname(file), a)))
      throw new InputError(
        '--from',
        `${join(dirname(file), a)} is missing; ${name} needs its ${a}/ directory beside it`,
      );
  }
  if (assetsOf(name).length > 0) await installAssets(name, version, dirname(file));
  log.info(`  ${name} ${version} from ${file}`);
  return toResult(m, cache.binaryPath(name, version), true);
}

async function acquireGroup(
  names: BinaryName[],
  set: VersionSet,
  opts: EnsureOptions,
  log: Logger,
): Promise<EnsuredBinary[]> {
  const group: BinaryGroup = groupOf(names[0]!);
  const version = versionOf(names[0]!, set);
  const arch = opts.arch ?? localArch();
  const native = arch === localArch();
  return cache.withLock(
    native ? `${group}-${version}` : `${group}-${version}-${arch}`,
    () => log.info(`  waiting for another hardwire process building ${group} ${version}`),
    async () => {
      // Someone else may have finished it while we waited.
      const ready: EnsuredBinary[] = [];
      const todo: BinaryName[] = [];
      for (const n of names) {
        const hit = opts.force ? undefined : await usable(n, set, opts, log);
        if (hit) ready.push(hit);
        else todo.push(n);
      }
      if (todo.length === 0) return ready;

      const scratch = await cache.scratchDir(`${group}-${version}-${arch}`);
      try {
        const staged = await stage(todo, set, scratch, opts, log);
        for (const n of todo) {
          const file = staged.files.get(n)!;
          const versionOutput = await probeVersion(n, version, file, arch);
          const m = await cache.install(file, {
            name: n,
            version,
            source: staged.source,
            origin: staged.origin(n),
            recipe: staged.recipe,
            versionOutput,
            ...(native ? {} : { arch }),
          });
          if (assetsOf(n).length > 0) {
            if (!staged.assetRoot)
              throw new StepError(
                `install ${n}`,
                `${n} needs ${assetsOf(n).join(', ')}/ beside it, and its source gave none`,
              );
            await installAssets(n, version, staged.assetRoot);
          }
          log.info(
            `  cached ${n} ${version}${native ? '' : ` for ${arch}`} (${staged.source}) sha256 ${m.sha256.slice(0, 16)}…`,
          );
          ready.push(toResult(m, cache.binaryPath(n, version, m.arch), true));
        }
        return ready;
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }
    },
  );
}

/** Builds or downloads the binaries into scratch, by the group's recipe and the options' mode. */
async function stage(
  todo: BinaryName[],
  set: VersionSet,
  scratch: string,
  opts: EnsureOptions,
  log: Logger,
): Promise<Staged> {
  const group = groupOf(todo[0]!);
  const version = versionOf(todo[0]!, set);
  const mode = opts.source ?? 'auto';
  const download = async (): Promise<Staged> => {
    const f = await fetchGroup(todo, set, scratch, log, opts.urls, opts.arch);
    return {
      files: f.files,
      origin: (n) => f.origin.get(n)!,
      source: 'fetch',
      ...(f.assetRoot ? { assetRoot: f.assetRoot } : {}),
    };
  };
  const recipe = sourceRecipe(group);
  if (recipe) {
    // Built from its pinned source archive where there is one; otherwise the verified release download.
    const src =
      mode === 'fetch' ? undefined : await resolveSource(group, version, opts.sourcePath, log);
    if (src) {
      log.info(
        `  building ${group} ${version} from ${describeSource(src)} (found through ${src.via})`,
      );
      return viaBuild(todo, set, scratch, log, opts.arch, src);
    }
    if (mode !== 'fetch')
      log.info(
        `  no ${group} ${version} source (--source, $${recipe.env} or ${sharedSourcesDir()}); downloading the release instead`,
      );
    return download();
  }
  // konnectivity has no release binaries (images only), and hardwire takes no release downloads for
  // what a worker runs: built from their Go modules (pause from its C source). Nor are there
  // releases of debug builds or of delve's command for `flags prove`.
  if (mode === 'build' || BUILD_ONLY.includes(group) || WORKER_GROUPS.includes(group))
    return viaBuild(todo, set, scratch, log, opts.arch);
  try {
    return await download();
  } catch (err) {
    if (mode === 'auto' && err instanceof DownloadError && err.kind === 'network') {
      log.warn(`${err.message}; building ${group} ${version} from Go modules instead`);
      return viaBuild(todo, set, scratch, log, opts.arch);
    }
    throw err;
  }
}

interface Staged {
  files: Map<BinaryName, string>;
  origin: (n: BinaryName) => string;
  source: SourceKind;
  recipe?: string;
  /** Where the asset directories (cfg/) are: the source tree or the unpacked release. */
  assetRoot?: string;
}

async function viaBuild(
  names: BinaryName[],
  set: VersionSet,
  scratch: string,
  log: Logger,
  arch: Arch | undefined,
  src?: ResolvedSource,
): Promise<Staged> {
  const b = await goBuild(names, set, scratch, log, {
    progressMs: Number(process.env.HARDWIRE_PROGRESS_MS ?? 30_000),
    ...(src ? { source: src } : {}),
    arch: arch ?? localArch(),
  });
  return {
    files: b.files,
    origin: () => (src ? describeSource(src) : b.moduleDir),
    source: 'build',
    recipe: b.recipe,
    assetRoot: b.moduleDir,
  };
}

export interface ListedBinary {
  name: BinaryName;
  version: string;
  arch: Arch;
  path: string;
  sha256: string;
  source: SourceKind | 'corrupt';
  origin: string;
  size: number;
  createdAt: string;
}

/** Every binary in the cache, re-hashed. A corrupt one is listed as such (and would be replaced). */
export async function listBinaries(): Promise<ListedBinary[]> {
  return (await cache.listEntries()).map((e) =>
    e.state === 'ok'
      ? {
          name: e.name,
          version: e.version,
          arch: e.arch,
          path: e.path,
          sha256: e.manifest.sha256,
          source: e.manifest.source,
          origin: e.manifest.origin,
          size: e.manifest.size,
          createdAt: e.manifest.createdAt,
        }
      : e.state === 'corrupt'
        ? {
            name: e.name,
            version: e.version,
            arch: e.arch,
            path: e.path,
            sha256: e.actual,
            source: 'corrupt' as const,
            origin: `manifest says ${e.expected}`,
            size: 0,
            createdAt: '',
          }
        : (() => {
            throw new StepError('list', 'unreachable');
          })(),
  );
}
