// The real CLI in a child process, like helpers/cli.ts, but without blocking: independent runs
// (one per malformed inventory, one per command) can go side by side.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../../lib/paths.ts';
import type { CliResult } from './cli.ts';

export function hardwireAsync(
  args: string[],
  opts: { timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(repoRoot, 'cli', 'hardwire.ts'), ...args],
      { cwd: repoRoot, timeout: opts.timeoutMs ?? 120_000, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

/** Runs each job, at most `width` at a time (the machine has two cores), keeping the order of results. */
export async function inBatches<T, R>(
  items: T[],
  width: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width)
    out.push(...(await Promise.all(items.slice(i, i + width).map(fn))));
  return out;
}
