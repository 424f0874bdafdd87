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
): Promise<BuiltImage[]> {
  const names = Object.keys(table);
  if (names.includes('busybox') && !existsSync(BUSYBOX))
    throw new InputError(
      'busybox',
      `${BUSYBOX} is missing; install it with: apt-get install -y busybox-static`,
    );
  const wanted = [
    ...new Set(['imagebuild', ...names.flatMap((n) => table[n]!.from)]),
  ] as BinaryName[];
  const got = await ensureAll(wanted, { log, ...(from ? { from } : {}) });
  const bins = new Map<string, (typeof got)[number]>(got.map((b) => [b.name, b]));
  const dir = join(cacheDir(), 'images');
  mkdirSync(dir, { recursive: true });
  const out: BuiltImage[] = [];
  for (const name of names) {
    const spec = table[name]!;
    const args = spec.args((n) => bins.get(n)!.path);
    // The tarball is reproducible (imagebuild writes mtime 0, root-owned): its inputs name it.
    const key = createHash('sha256')
      .update(
        JSON.stringify([
          spec.ref,
          args,
          bins.get('imagebuild')!.sha256,
          ...spec.from.map((n) => bins.get(n)!.sha256),
          ...(await Promise.all((spec.local ?? []).map(sha256File))),
        ]),
      )
      .digest('hex')
      .slice(0, 16);
    const file = join(dir, `${name}-${key}.tar`);
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
