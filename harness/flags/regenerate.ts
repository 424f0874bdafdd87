// `hardwire flags --regenerate`: rebuild flags/data/<version>/*.json with the Go analyzer.
// Needs Go (1.26); modules come from the Go module proxy into ~/.cache/hardwire/gomod.
import { writeApiLifecycle } from './api-lifecycle.ts';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../lib/log.ts';
import { InputError } from '../../lib/errors.ts';
import { runSync } from '../../lib/proc.ts';
import { repoRoot } from '../../lib/paths.ts';
import { dataDir, defaultFlagVersion } from '../../core/flags/map.ts';
import { flagTargets } from '../../core/components/registry/index.ts';
import { regenerateGates } from './gates-regenerate.ts';
import { goBinary, goEnv, step } from './go.ts';
import { releaseBuildLists } from './build-lists.ts';

export { goBinary, goEnv };

/** The versions flags/analyzer/go.mod (and ./etcd/go.mod) pin. */
export const analyzerVersions = { kubernetes: 'v1.36.3', etcd: 'v3.6.8' } as const;

interface AnalyzerPin {
  /** etcd paired with this Kubernetes version: kubeadm's DefaultEtcdVersion at that tag. */
  etcd: string;
  /** Module files (flags/analyzer/<modfile>, flags/analyzer/etcd/<etcdModfile>, or absolute); undefined: go.mod. */
  modfile?: string;
  etcdModfile?: string;
  /** flags/analyzer/node's module file for the kubelet and kube-proxy (undefined: go.mod); none when `node` is false. */
  nodeModfile?: string;
  /** Whether flags/analyzer/node (the kubelet and kube-proxy) has a build list for this version. */
  node?: boolean;
}

/**
 * Each Kubernetes version the analyzer can build a map for: the same analyzer source, another
 * build list (go build -modfile). v1.37.2's etcd 3.7.0 is kubeadm's pin at that tag
 * (k8s.io/kubernetes@v1.37.2/cmd/kubeadm/app/constants/constants.go:330, DefaultEtcdVersion = "3.7.0-0").
 */
export const analyzerPins: Readonly<Record<string, AnalyzerPin>> = {
  [analyzerVersions.kubernetes]: { etcd: analyzerVersions.etcd, node: true },
  'v1.37.2': {
    etcd: 'v3.7.0',
    modfile: 'go.v1.37.2.mod',
    etcdModfile: 'go.v3.7.0.mod',
    node: true,
    nodeModfile: 'go.v1.37.2.mod',
  },
};

/** The Kubernetes version with analyzer pins one minor below `version` (v1.36.3 for v1.37.2), if any. */
export function previousPin(version: string): string | undefined {
  const minor = (v: string) => Number(v.split('.')[1]);
  return Object.keys(analyzerPins).find((v) => minor(v) === minor(version) - 1);
}

export interface RegenerateResult {
  outDir: string;
  seconds: number;
}

/**
 * Build and run the analyzer. `outDir` defaults to the committed data directory; the test
 * regenerates into a temporary directory and compares bytes.
 */
export function regenerate(opts: {
  version?: string;
  outDir?: string;
  log: Logger;
}): RegenerateResult {
  const version = opts.version ?? defaultFlagVersion;
  const started = Date.now();
  const analyzerDir = join(repoRoot, 'harness', 'flags', 'analyzer');
  const work = mkdtempSync(join(tmpdir(), 'hardwire-flags-'));
  try {
    // A release with no committed module files gets build lists made now (build-lists.ts).
    let pin = analyzerPins[version];
    if (!pin) {
      const lists = releaseBuildLists(version, join(work, 'lists'), opts.log);
      if ('why' in lists)
        throw new InputError(
          'version',
          `cannot build a flag map for Kubernetes ${version}: ${lists.why} (committed module files: ${Object.keys(analyzerPins).join(', ')})`,
        );
      opts.log.step(`etcd ${lists.etcd}: ${lists.etcdCite}`);
      pin = { ...lists, node: true };
    }
    const mod = pin.modfile ? [`-modfile=${pin.modfile}`] : [];
    const etcdMod = pin.etcdModfile ? [`-modfile=${pin.etcdModfile}`] : [];
    const nodeMod = pin.nodeModfile ? [`-modfile=${pin.nodeModfile}`] : [];
    const outDir = opts.outDir ?? dataDir(version);
    mkdirSync(outDir, { recursive: true });
    // The flag set each command really has (pflag's own type/default/help/deprecated/hidden).
    const go = goBinary();
    step(
      'build k8sflags',
      go,
      [
        'build',
        ...mod,
        '-trimpath',
        '-tags',
        'providerless',
        '-o',
        join(work, 'k8sflags'),
        './cmd/k8sflags',
      ],
      analyzerDir,
      opts.log,
    );
    step(
      'dump Kubernetes flag sets',
      join(work, 'k8sflags'),
      [],
      analyzerDir,
      opts.log,
      join(work, 'k8sflags.json'),
    );
    step(
      'build etcdflags',
      go,
      ['build', ...etcdMod, '-trimpath', '-o', join(work, 'etcdflags'), './cmd/etcdflags'],
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
    // kubelet and kube-proxy load from flags/analyzer/node, with a build list of their own per version.
    const node = pin.node === true;
    if (node) {
      // Two binaries: kube-proxy adopts Go's whole flag.CommandLine, which the kubelet's imports fill.
      for (const [cmd, what] of [
        ['nodeflags', 'the kubelet'],
        ['proxyflags', 'kube-proxy'],
      ] as const) {
        step(
          `build ${cmd}`,
          go,
          [
            'build',
            ...nodeMod,
            '-trimpath',
            '-tags',
            'providerless',
            '-o',
            join(work, cmd),
            `./cmd/${cmd}`,
          ],
          join(analyzerDir, 'node'),
          opts.log,
        );
        step(
          `dump ${what}'s flag set`,
          join(work, cmd),
          [],
          analyzerDir,
          opts.log,
          join(work, `${cmd}.json`),
        );
      }
      const merged = {
        ...JSON.parse(readFileSync(join(work, 'nodeflags.json'), 'utf8')),
        ...JSON.parse(readFileSync(join(work, 'proxyflags.json'), 'utf8')),
      };
      writeFileSync(join(work, 'nodeflags.json'), JSON.stringify(merged));
    }
    // What to analyze is the registry's: each spec's flagTarget.
    writeFileSync(
      join(work, 'targets.json'),
      JSON.stringify(flagTargets().filter((t) => node || t.dir !== 'node')),
    );
    step(
      'build analyzer',
      go,
      ['build', ...mod, '-o', join(work, 'analyzer'), '.'],
      analyzerDir,
      opts.log,
    );
    // The analyzer loads packages relative to its module directories; its progress is shown as it prints.
    opts.log.step('analyze (go/packages, full type information)');
    const pins = [
      '-kubernetes-version',
      version,
      '-etcd-version',
      pin.etcd,
      ...(pin.modfile ? ['-modfile', pin.modfile] : []),
      ...(pin.etcdModfile ? ['-etcd-modfile', pin.etcdModfile] : []),
      ...(pin.nodeModfile ? ['-node-modfile', pin.nodeModfile] : []),
    ];
    runSync(
      join(work, 'analyzer'),
      [
        '-out',
        outDir,
        '-targets',
        join(work, 'targets.json'),
        '-runtime',
        join(work, 'k8sflags.json'),
        '-etcd-runtime',
        join(work, 'etcdflags.json'),
        ...(node ? ['-node-runtime', join(work, 'nodeflags.json')] : []),
        ...pins,
      ],
      {
        step: 'analyze',
        label: 'the flag analyzer',
        cwd: analyzerDir,
        env: goEnv(),
        inherit: true,
      },
    );
    // The gate tables beside the flags: the upgrade plan checks each unit's --feature-gates in them.
    regenerateGates(version, pin.etcd, opts.log, outDir);
    // And the API kinds the release stops serving: the plan lists the live objects stored in them.
    // With the kinds whose package the previous minor's k8s.io/api has and this one's lacks.
    writeApiLifecycle(version, outDir, previousPin(version));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return { outDir: opts.outDir ?? dataDir(version), seconds: (Date.now() - started) / 1000 };
}
