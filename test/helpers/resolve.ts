// Runs the real CLI with extra /etc/hosts entries that only it can see: a private mount namespace
// (unshare --mount, private propagation) with a copy of /etc/hosts bind-mounted over the real one.
// So an inventory can name its apiServerEndpoint by a DNS name that really resolves, through the
// system resolver, without touching this machine's /etc/hosts.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../lib/paths.ts';
import type { CliResult } from './cli.ts';

/** Writes /etc/hosts plus `entries` (name -> address) to `file`. */
export function hostsFileWith(file: string, entries: Record<string, string>): string {
  const extra = Object.entries(entries)
    .map(([name, address]) => `${address} ${name}`)
    .join('\n');
  writeFileSync(file, `${readFileSync('/etc/hosts', 'utf8').trimEnd()}\n${extra}\n`);
  return file;
}

export function hardwireResolving(
  hostsFile: string,
  args: string[],
  opts: { timeoutMs?: number } = {},
): CliResult {
  const r = spawnSync(
    'unshare',
    [
      '--mount',
      '--propagation',
      'private',
      '--',
      'sh',
      '-c',
      'mount --bind "$0" /etc/hosts && exec "$@"',
      hostsFile,
      process.execPath,
      join(repoRoot, 'cli', 'hardwire.ts'),
      ...args,
    ],
    {
      cwd: repoRoot,
      env: process.env,
      encoding: 'utf8',
      timeout: opts.timeoutMs ?? 120_000,
    },
  );
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}
