// Directories that ship with a binary (kube-bench's cfg/, the benchmarks it reads at run time),
// cached beside it: $HARDWIRE_CACHE/bin/<name>/<version>/<asset>/ plus assets.json with each tree's
// digest. Like the binary, an asset is handed out only while it still hashes to what was recorded.
import { randomBytes } from 'node:crypto';
import { cp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BINARIES } from '../registry/index.ts';
import { entryDir } from './cache.ts';
import { type BinaryName } from '../registry/index.ts';
import { treeDigest } from './sources.ts';

export function assetsOf(name: BinaryName): readonly string[] {
  return BINARIES[name].assets ?? [];
}

export function assetDir(name: BinaryName, version: string, asset: string): string {
  return join(entryDir(name, version), asset);
}

const recordPath = (name: BinaryName, version: string) =>
  join(entryDir(name, version), 'assets.json');

/** Copies each asset directory from root into the cache entry (temp + rename), then records the digests. */
export async function installAssets(
  name: BinaryName,
  version: string,
  root: string,
): Promise<void> {
  const digests: Record<string, string> = {};
  await rm(recordPath(name, version), { force: true });
  for (const a of assetsOf(name)) {
    const dest = assetDir(name, version, a);
    const tmp = `${dest}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      await cp(join(root, a), tmp, { recursive: true, errorOnExist: false });
      digests[a] = await treeDigest(tmp);
      await rm(dest, { recursive: true, force: true });
      await rename(tmp, dest);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  }
  await writeFile(recordPath(name, version), `${JSON.stringify(digests, null, 2)}\n`);
}

/** Undefined when every asset is present and unchanged; otherwise why not. */
export async function assetProblem(name: BinaryName, version: string): Promise<string | undefined> {
  const wanted = assetsOf(name);
  if (wanted.length === 0) return undefined;
  const rec = await readFile(recordPath(name, version), 'utf8')
    .then((t) => JSON.parse(t) as Record<string, string>)
    .catch(() => undefined);
  if (!rec) return 'its asset record (assets.json) is missing';
  for (const a of wanted) {
    const got = await treeDigest(assetDir(name, version, a)).catch(() => undefined);
    if (got !== rec[a])
      return `its ${a}/ directory ${got === undefined ? 'is missing' : 'changed since it was cached'}`;
  }
  return undefined;
}
