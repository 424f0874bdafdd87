// Builds the workers' images (components/images.ts) with imagebuild, into ~/.cache/hardwire/images.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureAll } from './binaries/index.ts';
import { sha256File } from './binaries/cache.ts';
import { cacheDir } from '../../lib/paths.ts';
import { run } from '../../lib/proc.ts';
import { InputError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import type { BinaryName } from './registry/index.ts';
import { BUSYBOX, IMAGE_DIR, IMAGES, type ImageSpec } from './images.ts';
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
        ]),
      )
      .digest('hex')
      .slice(0, 16);
    const file = join(dir, `${name}-${arch === localArch() ? '' : `${arch}-`}${key}.tar`);
    if (!existsSync(file)) {
      const tmp = `${file}.tmp-${process.pid}`;
      try {
        await run(bins.get('imagebuild')!.path, ['-ref', spec.ref, '-out', tmp, ...args], {
          step: `image ${name}`,
        });
        renameSync(tmp, file);
      } finally {
        rmSync(tmp, { force: true });
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
