// The analyzer's output is a function of its inputs alone: the analyzer's Go source and module files
// (whose go.sum pins every module byte), the TypeScript that drives it and writes its JSON (the
// import closure of the regenerate entry points, the registry's flag targets among it), and the Go
// toolchain. test/flags.test.ts compares the committed maps with a regeneration made at exactly these
// inputs, kept under ~/.cache/hardwire/flag-regen/<key>: a changed input is another key, and the
// analyzer runs again. HARDWIRE_FLAG_REGEN_CACHE=0 runs it every time.
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import { cacheDir, repoRoot } from '../../lib/paths.ts';
import { goBinary } from '../../harness/flags/go.ts';

const ENTRY_POINTS = ['harness/flags/regenerate.ts', 'harness/flags/etcd-regenerate.ts'];
const ANALYZER_DIR = 'harness/flags/analyzer';

/** Repository files a regeneration reads: the analyzer's tree and the TypeScript closure of its entry points. */
export function regenInputFiles(): string[] {
  const files = new Set<string>();
  const walk = (dir: string) => {
    for (const e of readdirSync(join(repoRoot, dir), { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else files.add(p);
    }
  };
  walk(ANALYZER_DIR);
  const queue = [...ENTRY_POINTS];
  while (queue.length > 0) {
    const f = queue.pop()!;
    if (files.has(f)) continue;
    files.add(f);
    const src = readFileSync(join(repoRoot, f), 'utf8');
    for (const m of src.matchAll(/(?:from\s+|import\s*\(\s*)'(\.\.?\/[^']+\.ts)'/g)) {
      queue.push(relative(repoRoot, resolve(repoRoot, dirname(f), m[1]!)));
    }
  }
  return [...files].sort();
}

/** The key: every input file's path and content, the Go version, and what the caller asks for. */
export function regenKey(what: string): string {
  const h = createHash('sha256');
  h.update(`${what}\n`);
  h.update(execFileSync(goBinary(), ['version'], { encoding: 'utf8' }));
  for (const f of regenInputFiles())
    h.update(`${f}\0`)
      .update(readFileSync(join(repoRoot, f)))
      .update('\0');
  return h.digest('hex').slice(0, 32);
}

/**
 * The files `produce` writes into a directory, from the cache when this key was produced before.
 * Returns the directory holding them (read-only use) and whether the analyzer ran.
 */
export function cachedRegeneration(
  what: string,
  produce: (outDir: string) => void,
): { dir: string; ran: boolean } {
  const dir = join(cacheDir(), 'flag-regen', regenKey(what));
  if (process.env.HARDWIRE_FLAG_REGEN_CACHE !== '0' && existsSync(dir)) return { dir, ran: false };
  const root = join(cacheDir(), 'flag-regen');
  mkdirSync(root, { recursive: true });
  const tmp = mkdtempSync(join(root, '.tmp-'));
  try {
    produce(tmp);
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir); // whole or not at all
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
  return { dir, ran: true };
}
