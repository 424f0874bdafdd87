// The binary cache: $HARDWIRE_CACHE/bin/<name>/<version>/<name> plus manifest.json beside it.
// A manifest is written only after a binary has been verified; a binary whose sha256 no longer
// matches its manifest is reported as corrupt and must never be handed out.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import {
  chmod,
  copyFile,
  mkdir,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { cacheDir } from '../../../lib/paths.ts';
import { PINNED_KUBERNETES } from '../../../lib/constants.ts';
import { withLock as withFileLock } from '../../../lib/lock.ts';
import { type SourceKind } from './catalog.ts';
import { type BinaryName } from '../registry/index.ts';
import { isBinaryName } from '../registry/index.ts';
import { ARCHES, localArch, type Arch } from '../../../lib/arch.ts';

export interface Manifest {
  name: BinaryName;
  version: string;
  sha256: string;
  size: number;
  source: SourceKind;
  /** Where it came from: a URL, a local path, or the Go module directory. */
  origin: string;
  /** For builds: hash of go.mod, go.sum, flags and Go version; a different recipe means rebuild. */
  recipe?: string;
  /** What the binary printed when asked for its version. */
  versionOutput: string;
  /** Built for another architecture than this machine's (absent: this machine's). */
  arch?: Arch;
  createdAt: string;
}

export type CacheState =
  | { state: 'ok'; path: string; manifest: Manifest }
  | { state: 'missing'; path: string }
  | { state: 'corrupt'; path: string; expected: string; actual: string };

export function binRoot(): string {
  return join(cacheDir(), 'bin');
}

/** Version strings such as v1.36.3+k0s.2 are safe as directory names; anything else is refused. */
function safeSegment(s: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9.+_-]*$/.test(s)) throw new Error(`unsafe cache path segment "${s}"`);
  return s;
}

/** This machine's binaries under bin/; another architecture's under bin/linux-<arch>/, in the same shape. */
function archRoot(arch: Arch | undefined): string {
  return arch === undefined || arch === localArch() ? binRoot() : join(binRoot(), `linux-${arch}`);
}

export function entryDir(name: BinaryName, version: string, arch?: Arch): string {
  return join(archRoot(arch), safeSegment(name), safeSegment(version));
}

export function binaryPath(name: BinaryName, version: string, arch?: Arch): string {
  return join(entryDir(name, version, arch), name);
}

function manifestPath(name: BinaryName, version: string, arch?: Arch): string {
  return join(entryDir(name, version, arch), 'manifest.json');
}

/** The pinned kubectl in the cache: the gates' and the drills' `kubectl`, one place. */
export function kubectlPath(): string {
  return binaryPath('kubectl', PINNED_KUBERNETES);
}

export async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

export async function readManifest(
  name: BinaryName,
  version: string,
  arch?: Arch,
): Promise<Manifest | undefined> {
  try {
    const doc = JSON.parse(await readFile(manifestPath(name, version, arch), 'utf8')) as Manifest;
    return doc.name === name && doc.version === version && /^[0-9a-f]{64}$/.test(doc.sha256)
      ? doc
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What a file's stat says about its content, as git's index and rsync use it. ctime changes on any
 * write, chmod or rename into place and cannot be set from user space, so a file replaced behind
 * our back with the same size and mtime still differs here (new inode, or new ctime).
 */
export interface StatKey {
  dev: string;
  ino: string;
  size: string;
  mtimeNs: string;
  ctimeNs: string;
}

export async function statKey(path: string): Promise<StatKey> {
  const st = await stat(path, { bigint: true });
  return {
    dev: String(st.dev),
    ino: String(st.ino),
    size: String(st.size),
    mtimeNs: String(st.mtimeNs),
    ctimeNs: String(st.ctimeNs),
  };
}

const sameKey = (a: StatKey, b: StatKey) =>
  a.dev === b.dev &&
  a.ino === b.ino &&
  a.size === b.size &&
  a.mtimeNs === b.mtimeNs &&
  a.ctimeNs === b.ctimeNs;

function verifiedPath(name: BinaryName, version: string, arch?: Arch): string {
  return join(entryDir(name, version, arch), 'verified.json');
}

/** The stat of the binary when it last hashed to its manifest's sha256. */
async function readVerified(
  name: BinaryName,
  version: string,
  sha256: string,
  arch?: Arch,
): Promise<StatKey | undefined> {
  try {
    const doc = JSON.parse(await readFile(verifiedPath(name, version, arch), 'utf8')) as StatKey & {
      sha256: string;
    };
    return doc.sha256 === sha256 ? doc : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Looks at a cache entry. The binary is re-hashed unless its stat is exactly the one recorded the
 * last time it hashed to the manifest's sha256; `rehash` (components list, --verify-hashes) always hashes.
 */
export async function inspect(
  name: BinaryName,
  version: string,
  opts: { rehash?: boolean; arch?: Arch } = {},
): Promise<CacheState> {
  const { arch } = opts;
  const path = binaryPath(name, version, arch);
  const manifest = await readManifest(name, version, arch);
  if (!manifest) return { state: 'missing', path };
  let before: StatKey;
  try {
    before = await statKey(path);
  } catch {
    return { state: 'missing', path };
  }
  const known = await readVerified(name, version, manifest.sha256, arch);
  if (!opts.rehash && known && sameKey(known, before)) return { state: 'ok', path, manifest };
  let actual: string;
  try {
    actual = await sha256File(path);
  } catch {
    return { state: 'missing', path };
  }
  if (actual !== manifest.sha256)
    return { state: 'corrupt', path, expected: manifest.sha256, actual };
  // Recorded only if nothing touched the file while it was hashed, and only if the record changes:
  // a listing re-hashes every entry, and must not rewrite a record another process is reading.
  if (!(known && sameKey(known, before)) && sameKey(before, await statKey(path))) {
    const tmp = `${verifiedPath(name, version, arch)}.${process.pid}.tmp`;
    await writeFile(tmp, `${JSON.stringify({ sha256: actual, ...before })}\n`);
    await rename(tmp, verifiedPath(name, version, arch));
  }
  return { state: 'ok', path, manifest };
}

/** Removes a cache entry (binary and manifest). */
export async function discard(name: BinaryName, version: string, arch?: Arch): Promise<void> {
  await rm(entryDir(name, version, arch), { recursive: true, force: true });
}

/**
 * Copies a verified file into the cache atomically: temp file in the same directory, hash it,
 * rename into place, then write the manifest (manifest last, so a crash leaves no manifest).
 */
export async function install(
  file: string,
  meta: Omit<Manifest, 'sha256' | 'size' | 'createdAt'>,
  expectedSha256?: string,
): Promise<Manifest> {
  const dir = entryDir(meta.name, meta.version, meta.arch);
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `.${meta.name}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await rm(join(dir, 'manifest.json'), { force: true });
    await rm(verifiedPath(meta.name, meta.version, meta.arch), { force: true });
    await copyFile(file, tmp);
    await chmod(tmp, 0o755);
    const sha256 = await sha256File(tmp);
    if (expectedSha256 && sha256 !== expectedSha256) {
      throw new Error(`copy of ${file} hashed to ${sha256}, expected ${expectedSha256}`);
    }
    const { size } = await stat(tmp);
    await rename(tmp, join(dir, meta.name));
    const manifest: Manifest = { ...meta, sha256, size, createdAt: new Date().toISOString() };
    const mtmp = `${tmp}.json`;
    await writeFile(mtmp, `${JSON.stringify(manifest, null, 2)}\n`);
    await rename(mtmp, manifestPath(meta.name, meta.version, meta.arch));
    // Recorded now, as inspect would record it: a listing later must not rewrite it (test/components.test.ts).
    const key = await statKey(join(dir, meta.name));
    const vtmp = `${tmp}.verified`;
    await writeFile(vtmp, `${JSON.stringify({ sha256, ...key })}\n`);
    await rename(vtmp, verifiedPath(meta.name, meta.version, meta.arch));
    return manifest;
  } finally {
    await rm(tmp, { force: true });
  }
}

/** Every cache entry that has a manifest, with its state: this machine's, then each other architecture's. */
export async function listEntries(): Promise<
  Array<CacheState & { name: BinaryName; version: string; arch: Arch }>
> {
  const out: Array<CacheState & { name: BinaryName; version: string; arch: Arch }> = [];
  for (const arch of ARCHES) {
    const root = archRoot(arch);
    const names = await readdir(root).catch(() => [] as string[]);
    for (const name of names.sort()) {
      if (!isBinaryName(name)) continue;
      for (const version of (await readdir(join(root, name)).catch(() => [] as string[])).sort()) {
        const st = await inspect(name, version, { rehash: true, arch }); // a listing always re-hashes
        if (st.state !== 'missing') out.push({ ...st, name, version, arch });
      }
    }
  }
  return out;
}

/** A scratch directory inside the cache (same filesystem, so renames are atomic). */
export async function scratchDir(label: string): Promise<string> {
  const dir = join(cacheDir(), 'tmp', `${label}-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** A cross-process lock (lib/lock.ts) so that parallel test workers or commands do not build the same group twice. */
export function withLock<T>(label: string, onWait: () => void, fn: () => Promise<T>): Promise<T> {
  return withFileLock(
    join(cacheDir(), 'locks', `${safeSegment(label)}.lock`),
    `building ${label}`,
    Infinity,
    fn,
    { onWait, pollMs: 500 },
  );
}
