// `hardwire flags --regenerate`: rebuild flags/data/<version>/*.json with the Go analyzer.
// Needs Go (1.26); modules come from the Go module proxy into ~/.cache/hardwire/gomod.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../lib/log.ts';
import { InputError, StepError } from '../lib/errors.ts';
import { cacheDir, repoRoot } from '../lib/paths.ts';
import { dataDir, defaultFlagVersion } from './map.ts';

/** The versions flags/analyzer/go.mod (and ./etcd/go.mod) pin. */
export const analyzerVersions = { kubernetes: 'v1.36.3', etcd: 'v3.6.8' } as const;

export function goBinary(): string {
  if (process.env.GO) return process.env.GO;
  for (const p of ['/usr/local/go/bin/go']) if (existsSync(p)) return p;
  return 'go';
}

export function goEnv(): NodeJS.ProcessEnv {
  return { ...process.env, GOMODCACHE: process.env.GOMODCACHE ?? join(cacheDir(), 'gomod'), GOFLAGS: '-mod=readonly' };
}

function run(step: string, args: string[], cwd: string, log: Logger, stdoutFile?: string): void {
  log.step(`${step}: go ${args.join(' ')}`);
  const res = spawnSync(goBinary(), args, { cwd, env: goEnv(), encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] });
  if (res.error) {
    throw new StepError(step, `cannot run go (${res.error.message}); regenerating the flag map needs Go 1.26 on PATH or $GO`, { cause: res.error });
  }
  if (res.status !== 0) {
    throw new StepError(step, `go ${args[0]} exited ${res.status}`, { detail: (res.stderr ?? '').trim().split('\n').slice(-20) });
  }
  if (res.stderr.trim()) for (const l of res.stderr.trim().split('\n')) log.info(`  ${l}`);
  if (stdoutFile) writeFileSync(stdoutFile, res.stdout);
}

function binRun(step: string, bin: string, args: string[], log: Logger, stdoutFile?: string): void {
  log.step(`${step}: ${bin.split('/').pop()} ${args.join(' ')}`);
  try {
    const out = execFileSync(bin, args, { env: goEnv(), encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'inherit'] });
    if (stdoutFile) writeFileSync(stdoutFile, out);
  } catch (err) {
    throw new StepError(step, `${bin} failed`, { cause: err });
  }
}

export interface RegenerateResult {
  outDir: string;
  seconds: number;
}

/**
 * Build and run the analyzer. `outDir` defaults to the committed data directory; the test
 * regenerates into a temporary directory and compares bytes.
 */
export function regenerate(opts: { version?: string; outDir?: string; log: Logger }): RegenerateResult {
  const version = opts.version ?? defaultFlagVersion;
  if (version !== analyzerVersions.kubernetes) {
    throw new InputError('version', `the analyzer is pinned to Kubernetes ${analyzerVersions.kubernetes} (flags/analyzer/go.mod); cannot regenerate ${version}`);
  }
  const started = Date.now();
  const analyzerDir = join(repoRoot, 'flags', 'analyzer');
  const outDir = opts.outDir ?? dataDir(version);
  mkdirSync(outDir, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'hardwire-flags-'));
  try {
    // The flag set each command really has (pflag's own type/default/help/deprecated/hidden).
    run('build k8sflags', ['build', '-trimpath', '-tags', 'providerless', '-o', join(work, 'k8sflags'), './cmd/k8sflags'], analyzerDir, opts.log);
    binRun('dump Kubernetes flag sets', join(work, 'k8sflags'), [], opts.log, join(work, 'k8sflags.json'));
    run('build etcdflags', ['build', '-trimpath', '-o', join(work, 'etcdflags'), './cmd/etcdflags'], join(analyzerDir, 'etcd'), opts.log);
    binRun('dump etcd defaults', join(work, 'etcdflags'), [], opts.log, join(work, 'etcdflags.json'));
    run('build analyzer', ['build', '-o', join(work, 'analyzer'), '.'], analyzerDir, opts.log);
    // The analyzer loads packages relative to its module directories.
    log(opts.log, 'analyze (go/packages, full type information)');
    try {
      execFileSync(join(work, 'analyzer'), ['-out', outDir, '-runtime', join(work, 'k8sflags.json'), '-etcd-runtime', join(work, 'etcdflags.json')], {
        cwd: analyzerDir, env: goEnv(), stdio: ['ignore', 'inherit', 'inherit'],
      });
    } catch (err) {
      throw new StepError('analyze', 'the flag analyzer failed', { cause: err });
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return { outDir, seconds: (Date.now() - started) / 1000 };
}

function log(l: Logger, m: string) {
  l.step(m);
}
