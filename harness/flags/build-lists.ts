// Build lists for a Kubernetes release the analyzer has no module files for (issue 42): the same
// analyzer source, with go.mod files made here for that release and completed by `go mod tidy`
// against the Go module proxy. k8s.io/kubernetes's own go.mod names its staging modules
// (`k8s.io/api => ./staging/src/k8s.io/api`), which a module outside the repository must pin to the
// release's tags (v0.<minor>.<patch>); etcd is kubeadm's DefaultEtcdVersion at that tag.
import { readFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../lib/log.ts';
import { repoRoot } from '../../lib/paths.ts';
import { etcdBuildList } from './etcd-on-demand.ts';
import { goModDownload, tidyModfile } from './go.ts';

export const KUBERNETES = 'k8s.io/kubernetes';

const analyzerDir = () => join(repoRoot, 'harness', 'flags', 'analyzer');

/** The staging modules k8s.io/kubernetes's go.mod replaces with its own directories. */
export function stagingModules(goMod: string): string[] {
  return [...goMod.matchAll(/^\s*(k8s\.io\/[\w.-]+)\s+=>\s+\.\/staging\/src\//gm)].map(
    (m) => m[1]!,
  );
}

/** kubeadm's DefaultEtcdVersion at that tag ("3.6.8-0" → v3.6.8), cited at its line. */
export function kubeadmEtcd(moduleDir: string, version: string): { etcd: string; cite: string } {
  const rel = 'cmd/kubeadm/app/constants/constants.go';
  const lines = readFileSync(join(moduleDir, rel), 'utf8').split('\n');
  const i = lines.findIndex((l) => /\bDefaultEtcdVersion\s*=\s*"\d+\.\d+\.\d+-\d+"/.test(l));
  if (i < 0) throw new Error(`${KUBERNETES}@${version}/${rel} declares no DefaultEtcdVersion`);
  const v = /"(\d+\.\d+\.\d+)-\d+"/.exec(lines[i]!)![1]!;
  return { etcd: `v${v}`, cite: `${KUBERNETES}@${version}/${rel}:${i + 1} ${lines[i]!.trim()}` };
}

/** The analyzer's require of golang.org/x/tools, kept the same for every release. */
function toolsVersion(): string {
  const v = /golang\.org\/x\/tools (v\S+)/.exec(
    readFileSync(join(analyzerDir(), 'go.mod'), 'utf8'),
  );
  if (!v) throw new Error('harness/flags/analyzer/go.mod requires no golang.org/x/tools');
  return v[1]!;
}

/** One module file for `module` at the release, its staging modules pinned to the release's tags, tidied in `cwd`. */
function tidied(opts: {
  module: string;
  cwd: string;
  modfile: string;
  requires: string[];
  staging: string[];
  version: string;
  log: Logger;
}): string {
  const staged = opts.version.replace(/^v1\./, 'v0.');
  opts.log.step(`go mod tidy: ${opts.module} at ${KUBERNETES} ${opts.version}`);
  return tidyModfile({
    modfile: opts.modfile,
    module: opts.module,
    cwd: opts.cwd,
    header: `Made by harness/flags/build-lists.ts for ${KUBERNETES} ${opts.version}, then go mod tidy.`,
    requires: opts.requires,
    replaces: opts.staging.map((m) => `${m} => ${m} ${staged}`),
    timeoutMs: 1_200_000,
  });
}

export interface ReleaseBuildLists {
  etcd: string;
  /** kubeadm's DefaultEtcdVersion line that pairs that etcd with the release. */
  etcdCite: string;
  /** Absolute module files (a go.sum beside each): the control plane's, the kubelet's and kube-proxy's, etcd's. */
  modfile: string;
  nodeModfile: string;
  etcdModfile: string;
}

/** The three build lists of the analyzer at `version`, written under `work`; or why the release cannot have them. */
export function releaseBuildLists(
  version: string,
  work: string,
  log: Logger,
): ReleaseBuildLists | { why: string } {
  if (!/^v1\.\d+\.\d+$/.test(version))
    return { why: `${version} is not a Kubernetes release a flag map can be built for` };
  log.step(`go mod download ${KUBERNETES}@${version}`);
  const got = goModDownload(KUBERNETES, version, analyzerDir());
  if ('why' in got)
    return {
      why: `the Go module proxy does not serve ${KUBERNETES}@${version} (${got.why})`,
    };
  const staging = stagingModules(readFileSync(got.goMod, 'utf8'));
  const { etcd, cite } = kubeadmEtcd(got.dir, version);
  for (const d of ['k8s', 'node', 'etcd']) mkdirSync(join(work, d), { recursive: true });
  const kube = `${KUBERNETES} ${version}`;
  const modfile = tidied({
    module: 'hardwire.local/flags/analyzer',
    cwd: analyzerDir(),
    modfile: join(work, 'k8s', 'go.mod'),
    requires: [`golang.org/x/tools ${toolsVersion()}`, kube],
    staging,
    version,
    log,
  });
  const nodeModfile = tidied({
    module: 'hardwire.local/flags/analyzer/node',
    cwd: join(analyzerDir(), 'node'),
    modfile: join(work, 'node', 'go.mod'),
    requires: [kube],
    staging,
    version,
    log,
  });
  const etcdModfile = etcdBuildList(etcd, join(work, 'etcd'), log);
  return { etcd, etcdCite: cite, modfile, nodeModfile, etcdModfile };
}
