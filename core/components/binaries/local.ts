// The local-path source: binaries the operator already has, in --from DIR or the inventory's
// components.from. They are checked (runs, reports the expected version) and copied into the cache.
import { accessSync, constants, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { InputError } from '../../../lib/errors.ts';
import { expandHome } from '../../../lib/paths.ts';
import { type BinaryName } from '../registry/index.ts';

/** Resolves DIR (relative to baseDir, "~" allowed) and checks that it is a directory. */
export function resolveFromDir(dir: string, field: string, baseDir = process.cwd()): string {
  const p = expandHome(dir);
  const abs = isAbsolute(p) ? p : resolve(baseDir, p);
  let isDir = false;
  try {
    isDir = statSync(abs).isDirectory();
  } catch {
    /* reported below */
  }
  if (!isDir)
    throw new InputError(
      field,
      `${abs} is not a directory; point it at a directory holding the component binaries`,
    );
  return abs;
}

/** The executable for name inside dir, or an InputError naming what is missing. */
export function localBinary(dir: string, name: BinaryName, field: string): string {
  const file = join(dir, name);
  try {
    if (!statSync(file).isFile()) throw new Error('not a file');
    accessSync(file, constants.X_OK);
  } catch {
    throw new InputError(
      field,
      `${file} is missing or not executable; put ${name} there or drop ${field} to build or download it`,
    );
  }
  return file;
}
