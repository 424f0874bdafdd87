// Runs the real CLI as a user would, in a child process.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../../lib/paths.ts';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function hardwire(
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): CliResult {
  const r = spawnSync(process.execPath, [join(repoRoot, 'cli', 'hardwire.ts'), ...args], {
    cwd: opts.cwd ?? repoRoot,
    env: { ...process.env, ...opts.env },
    encoding: 'utf8',
    timeout: opts.timeoutMs ?? 120_000,
    // A --json document can be several MB (compare's report): spawnSync's default keeps 1 MB.
    maxBuffer: 64 << 20,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}
