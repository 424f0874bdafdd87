// Builds the workers' images (components/images.ts) with imagebuild, into ~/.cache/hardwire/images.
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { ensureAll } from './binaries/index.ts';
import { sha256File } from './binaries/cache.ts';
import { cacheDir } from '../../lib/paths.ts';
import { run } from '../../lib/proc.ts';
import { InputError, StepError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import type { BinaryName } from './registry/index.ts';
import {
  BUSYBOX,
  IMAGE_DIR,
  IMAGES,
  REGISTRY_IMAGE_DIR,
  servedImages,
  type ImageSpec,
} from './images.ts';
import type { AddonName } from '../inventory/schema.ts';
import { localArch, type Arch } from '../../lib/arch.ts';

/** busybox-static for an architecture: this machine's package, or Debian's package of that architecture unpacked by setup. */
export function busyboxFor(arch: Arch): string {
  return arch === localArch()
    ? BUSYBOX
    : join(cacheDir(), 'debs', `busybox-static-${arch}`, 'bin', 'busybox');
}

export interface BuiltImage {
  name: string;
  ref: string;
  path: string;
  sha256: string;
  hostPath: string;
}

/**
 * The tarball's sha256, hashed once and kept beside it: the file is named by its inputs and never
 * rewritten, so hashing CoreDNS's 50 MB on every wire (a no-op included) would buy nothing.
 */
async function digestOf(file: string): Promise<string> {
  const side = `${file}.sha256`;
  if (existsSync(side)) return readFileSync(side, 'utf8').trim();
  const sha = await sha256File(file);
  writeFileSync(side, `${sha}\n`);
  return sha;
}

/**
 * Builds (or finds in the cache) every image of a table (default: the workers' IMAGES; compare's
 * kubeadm plane passes KUBEADM_IMAGES); the binaries they hold and imagebuild come from ensureAll.
 */
export async function ensureImages(
  log: Logger,
  from?: string,
  table: Record<string, ImageSpec<string>> = IMAGES as Record<string, ImageSpec<string>>,
  arch: Arch = localArch(),
): Promise<BuiltImage[]> {
  const names = Object.keys(table);
  const busybox = busyboxFor(arch);
  if (names.includes('busybox') && !existsSync(busybox))
    throw new InputError(
      'busybox',
      `${busybox} is missing; ${arch === localArch() ? 'install it with: apt-get install -y busybox-static' : `scripts/setup.sh unpacks Debian's busybox-static:${arch} there`}`,
    );
  const contents = [...new Set(names.flatMap((n) => table[n]!.from))] as BinaryName[];
  // imagebuild runs here; what goes into the images is built for the hosts' architecture.
  const [tool] = await ensureAll(['imagebuild'], { log, ...(from ? { from } : {}) });
  const got = await ensureAll(contents, { log, arch, ...(from ? { from } : {}) });
  const bins = new Map<string, (typeof got)[number]>([...got, tool!].map((b) => [b.name, b]));
  const local = (f: string) => (f === BUSYBOX ? busybox : f);
  const dir = join(cacheDir(), 'images');
  mkdirSync(dir, { recursive: true });
  const out: BuiltImage[] = [];
  for (const name of names) {
    const spec = table[name]!;
    const debs = spec.debian ? await debsOf(spec.debian.packages, log) : [];
    const args = [
      ...spec.args((n) => bins.get(n)!.path, local),
      ...(arch === localArch() ? [] : ['-arch', arch]),
    ];
    // The tarball is reproducible (imagebuild writes mtime 0, root-owned): its inputs name it.
    const key = createHash('sha256')
      .update(
        JSON.stringify([
          spec.ref,
          args,
          bins.get('imagebuild')!.sha256,
          ...spec.from.map((n) => bins.get(n)!.sha256),
          ...(await Promise.all((spec.local ?? []).map((f) => sha256File(local(f))))),
          ...(await Promise.all(debs.map(sha256File))),
          spec.debian?.files ?? {},
        ]),
      )
      .digest('hex')
      .slice(0, 16);
    const file = join(dir, `${name}-${arch === localArch() ? '' : `${arch}-`}${key}.tar`);
    if (!existsSync(file)) {
      const tmp = `${file}.tmp-${process.pid}`;
      const tree = `${file}.tree-${process.pid}`;
      try {
        const treeArgs = spec.debian ? await debianTree(tree, debs, spec.debian.files) : [];
        await run(
          bins.get('imagebuild')!.path,
          ['-ref', spec.ref, '-out', tmp, ...treeArgs, ...args],
          { step: `image ${name}` },
        );
        renameSync(tmp, file);
      } finally {
        rmSync(tmp, { force: true });
        rmSync(tree, { recursive: true, force: true });
      }
      log.info(`  built image ${spec.ref} (${file})`);
    }
    out.push({
      name,
      ref: spec.ref,
      path: file,
      sha256: await digestOf(file),
      hostPath: `${IMAGE_DIR}/${name}.tar`,
    });
  }
  return out;
}

/**
 * The .deb files of `packages` (this machine's apt candidates), downloaded once with
 * `apt-get download` into ~/.cache/hardwire/debs/<package>/ and reused from there: a wire does not
 * reach the mirror again, and the image's cache key is the files' content.
 */
async function debsOf(packages: readonly string[], log: Logger): Promise<string[]> {
  const out: string[] = [];
  for (const p of packages) {
    if (!/^[a-z0-9][a-z0-9.+-]*$/.test(p))
      throw new InputError('package', `"${p}" is not a Debian package name`);
    const dir = join(cacheDir(), 'debs', p);
    const have = () =>
      existsSync(dir)
        ? readdirSync(dir).filter((f) => f.startsWith(`${p}_`) && f.endsWith('.deb'))
        : [];
    if (have().length === 0) {
      mkdirSync(dir, { recursive: true });
      await run('apt-get', ['download', p], {
        step: `apt-get download ${p}`,
        cwd: dir,
        hint: 'the image is built from Debian packages; apt-get must reach a Debian mirror once',
      });
      log.info(`  downloaded ${have().join(', ')}`);
    }
    const debs = have().sort();
    if (debs.length !== 1)
      throw new StepError(
        `image package ${p}`,
        `${dir} holds ${debs.length} .deb files of ${p} (${debs.join(', ')}); keep one`,
      );
    out.push(join(dir, debs[0]!));
  }
  return out;
}

/** Unpacks `debs` into `tree` (dpkg-deb -x, no maintainer scripts) and writes `files` over it. */
async function debianTree(
  tree: string,
  debs: string[],
  files: Readonly<Record<string, string>>,
): Promise<string[]> {
  mkdirSync(tree, { recursive: true });
  for (const d of debs) await run('dpkg-deb', ['-x', d, tree], { step: `dpkg-deb -x ${d}` });
  for (const [path, content] of Object.entries(files)) {
    const at = join(tree, path);
    if (path.endsWith('/')) {
      mkdirSync(at, { recursive: true });
      continue;
    }
    mkdirSync(dirname(at), { recursive: true });
    writeFileSync(at, content, { mode: 0o644 });
  }
  return ['-tree', tree];
}

export interface RegistryImage extends BuiltImage {
  /** The names it is pushed under, in the registry (docker.io's repository:tag). */
  as: readonly string[];
}

/**
 * The images the lab registry serves (with the inventory's addons' images), built or found in the
 * cache, each with where it lands on the registry's host.
 */
export async function ensureRegistryImages(
  log: Logger,
  from?: string,
  addons: readonly AddonName[] = [],
): Promise<RegistryImage[]> {
  const served = servedImages(addons);
  const table = Object.fromEntries(Object.entries(served).map(([n, r]) => [n, r.spec]));
  const built = await ensureImages(log, from, table);
  return built.map((b) => ({
    ...b,
    hostPath: `${REGISTRY_IMAGE_DIR}/${b.name}.tar`,
    as: served[b.name]!.as,
  }));
}
