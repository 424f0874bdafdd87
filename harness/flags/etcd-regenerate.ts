// `hardwire flags --regenerate --etcd VERSION`: etcd's flag map alone, at an etcd that no Kubernetes
// release pairs with (v3.6.16, the patch an upgrade passes through before 3.7). The same analyzer
// and the same steps as regenerate.ts's etcd part, with etcd's own build list
// (flags/analyzer/etcd/go.<version>.mod, passed with -modfile), into data/etcd/<version>.json; and
// etcd's feature-gate table at that version (cmd/featuregates) into data/etcd/<version>.feature-gates.json.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Logger } from '../../lib/log.ts';
import { InputError } from '../../lib/errors.ts';
import { runSync } from '../../lib/proc.ts';
import { repoRoot } from '../../lib/paths.ts';
import { flagTargets } from '../../core/components/registry/index.ts';
import { etcdDataDir, etcdGateFile, etcdMapFile } from '../../core/flags/etcd-maps.ts';
import { regenerateEtcdGates } from './gates-regenerate.ts';
import { goBinary, goEnv, step } from './go.ts';

/**
 * The etcd versions with an etcd-only build list: the hop-only patches of the build table
 * (core/components/binaries/catalog.ts ETCD_STEPS). Each module file is core/components/go/etcd@<v>'s
 * etcd server pin with the analyzer's runtimeflags module, then `go mod tidy -modfile`.
 */
export const ETCD_ONLY_PINS: Readonly<Record<string, string>> = {
  'v3.6.16': 'go.v3.6.16.mod',
};

export interface EtcdRegenerateResult {
  files: string[];
  seconds: number;
}

/** Builds and runs the analyzer for etcd alone; `outDir` defaults to the committed data/etcd/. */
export function regenerateEtcd(opts: {
  version: string;
  outDir?: string;
  log: Logger;
  /** A build list made elsewhere (etcd-on-demand.ts), by absolute path; default: ETCD_ONLY_PINS's. */
  modfile?: string;
}): EtcdRegenerateResult {
  const modfile = opts.modfile ?? ETCD_ONLY_PINS[opts.version];
  if (!modfile) {
    throw new InputError(
      '--etcd',
      `the analyzer has etcd-only module files for ${Object.keys(ETCD_ONLY_PINS).join(', ')} (harness/flags/etcd-regenerate.ts); a Kubernetes release's etcd comes with "hardwire flags --regenerate --version <kubernetes>"`,
    );
  }
  const started = Date.now();
  const analyzerDir = join(repoRoot, 'harness', 'flags', 'analyzer');
  const outDir = opts.outDir ?? etcdDataDir();
  const files = [
    join(outDir, basename(etcdMapFile(opts.version))),
    join(outDir, basename(etcdGateFile(opts.version))),
  ] as const;
  const work = mkdtempSync(join(tmpdir(), 'hardwire-etcd-flags-'));
  try {
    const go = goBinary();
    step(
      'build etcdflags',
      go,
      [
        'build',
        `-modfile=${modfile}`,
        '-trimpath',
        '-o',
        join(work, 'etcdflags'),
        './cmd/etcdflags',
      ],
      join(analyzerDir, 'etcd'),
      opts.log,
    );
    step(
      'dump etcd defaults',
      join(work, 'etcdflags'),
      [],
      analyzerDir,
      opts.log,
      join(work, 'etcdflags.json'),
    );
    writeFileSync(
      join(work, 'targets.json'),
      JSON.stringify(flagTargets().filter((t) => t.name === 'etcd')),
    );
    step('build analyzer', go, ['build', '-o', join(work, 'analyzer'), '.'], analyzerDir, opts.log);
    opts.log.step('analyze etcd (go/packages, full type information)');
    // No Kubernetes release: -kubernetes-version "" leaves kubernetesVersion out of the map.
    const out = join(work, 'out');
    runSync(
      join(work, 'analyzer'),
      [
        '-out',
        out,
        '-targets',
        join(work, 'targets.json'),
        '-component',
        'etcd',
        '-etcd-runtime',
        join(work, 'etcdflags.json'),
        '-kubernetes-version',
        '',
        '-etcd-version',
        opts.version,
        '-etcd-modfile',
        modfile,
      ],
      {
        step: 'analyze',
        label: 'the flag analyzer',
        cwd: analyzerDir,
        env: goEnv(),
        inherit: true,
      },
    );
    mkdirSync(outDir, { recursive: true });
    copyFileSync(join(out, 'etcd.json'), files[0]);
    regenerateEtcdGates(opts.version, opts.log, files[1]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return { files: [...files], seconds: (Date.now() - started) / 1000 };
}
