// Go for the analyzer builds: $GO or /usr/local/go, with hardwire's module cache and a read-only build list.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir, repoRoot } from '../../lib/paths.ts';
import { runSync } from '../../lib/proc.ts';
import type { Logger } from '../../lib/log.ts';

export function goBinary(): string {
  if (process.env.GO) return process.env.GO;
  for (const p of ['/usr/local/go/bin/go']) if (existsSync(p)) return p;
  return 'go';
}

export function goEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GOMODCACHE: process.env.GOMODCACHE ?? join(cacheDir(), 'gomod'),
    GOFLAGS: '-mod=readonly',
  };
}

/** Runs one build or dump step: its stderr lines are logged, its stdout goes to `stdoutFile`. */
export function step(
  name: string,
  file: string,
  args: string[],
  cwd: string,
  log: Logger,
  stdoutFile?: string,
): void {
  log.step(`${name}: ${file.split('/').pop()} ${args.join(' ')}`);
  const res = runSync(file, args, {
    step: name,
    cwd,
    env: goEnv(),
    hint: 'regenerating the flag map needs Go 1.26 on PATH or $GO',
  });
  if (res.stderr.trim()) for (const l of res.stderr.trim().split('\n')) log.info(`  ${l}`);
  if (stdoutFile) writeFileSync(stdoutFile, res.stdout);
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

/** `go mod download -json module@version`: where the module and its go.mod are, or go's one-line reason. */
export function goModDownload(
  module: string,
  version: string,
  cwd: string,
): { dir: string; goMod: string } | { why: string } {
  const r = runSync(goBinary(), ['mod', 'download', '-json', `${module}@${version}`], {
    step: 'go mod download',
    cwd,
    env: { ...goEnv(), GOFLAGS: '' },
    allowFail: true,
    timeoutMs: 600_000,
  });
  try {
    const j = JSON.parse(r.stdout) as { Dir?: string; GoMod?: string; Error?: string };
    if (r.code === 0 && j.Dir && j.GoMod) return { dir: j.Dir, goMod: j.GoMod };
    return { why: oneLine(j.Error ?? r.stderr) || `exit ${r.code}` };
  } catch {
    return { why: oneLine(r.stderr) || `exit ${r.code}` };
  }
}

/**
 * A module file for the analyzer's module `module` (its directory `cwd`): `header` as its comment,
 * each of `requires` and the runtimeflags module, replaced by its directory here, and `replaces`;
 * completed by `go mod tidy`, which also writes the go.sum beside it. Throws with go's last line.
 */
export function tidyModfile(o: {
  modfile: string;
  module: string;
  cwd: string;
  header: string;
  requires: readonly string[];
  replaces?: readonly string[];
  timeoutMs: number;
}): string {
  const runtimeflags = join(repoRoot, 'harness', 'flags', 'analyzer', 'runtimeflags');
  writeFileSync(
    o.modfile,
    [
      `// ${o.header}`,
      `module ${o.module}`,
      '',
      'go 1.26.0',
      '',
      ...o.requires.map((r) => `require ${r}`),
      'require hardwire.local/flags/analyzer/runtimeflags v0.0.0',
      '',
      `replace hardwire.local/flags/analyzer/runtimeflags => ${runtimeflags}`,
      ...(o.replaces ?? []).map((r) => `replace ${r}`),
      '',
    ].join('\n'),
  );
  // tidy writes the build list, so not under goEnv()'s -mod=readonly.
  const r = runSync(goBinary(), ['mod', 'tidy', `-modfile=${o.modfile}`], {
    step: 'go mod tidy',
    cwd: o.cwd,
    env: { ...goEnv(), GOFLAGS: '' },
    allowFail: true,
    timeoutMs: o.timeoutMs,
  });
  if (r.code !== 0)
    throw new Error(
      `go mod tidy (${o.module}): ${r.stderr.trim().split('\n').at(-1)?.trim() || `exit ${r.code}`}`,
    );
  return o.modfile;
}
