// A Kubernetes release's flag maps on demand (audit, issue 42): a kube-apiserver, kubelet... at a
// release with no committed map gets the whole release's maps built as `flags --regenerate
// --kubernetes-version V` builds them (build-lists.ts makes the module files), into
// ~/.cache/hardwire/flag-maps/<V>/, where the next audit finds them. A release the Go module proxy
// does not serve is one line, and the process's flags stay listed as unmapped.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Logger } from '../../lib/log.ts';
import { cacheDir, repoRoot } from '../../lib/paths.ts';
import { dataDir, loadFlagMap, type FlagMap } from '../../core/flags/map.ts';
import { GATE_FILE, type GateData } from '../../core/flags/gates.ts';
import type { ReleaseLookup } from '../../core/upgrade/plan-for.ts';
import { etcdMapOnDemand, type OnDemand } from './etcd-on-demand.ts';
import { regenerate } from './regenerate.ts';
import { KUBERNETES } from './build-lists.ts';
import { goModDownload } from './go.ts';

/** Where releases built on demand are kept: outside the repository, shared by every clone on the machine. */
export function releasesDir(): string {
  return join(cacheDir(), 'flag-maps');
}

function load(component: string, version: string, dir: string): OnDemand | undefined {
  const file = join(dir, version, `${component}.json`);
  // The gate table is written last by regenerate: a release without it is not whole.
  if (!existsSync(file) || !existsSync(join(dir, version, GATE_FILE))) return undefined;
  const map = JSON.parse(readFileSync(file, 'utf8')) as FlagMap;
  if (map.component !== component || map.kubernetesVersion !== version) return undefined;
  return { map, file };
}

/** The committed map, else the release built earlier, else the release built now; or why there is none. */
export function kubernetesMapOnDemand(
  component: string,
  version: string,
  log: Logger,
  dir = releasesDir(),
): OnDemand {
  if (existsSync(join(dataDir(version), `${component}.json`)))
    return {
      map: loadFlagMap(component, version),
      file: relative(repoRoot, join(dataDir(version), `${component}.json`)),
    };
  const cached = load(component, version, dir);
  if (cached) return cached;
  if (!/^v1\.\d+\.\d+$/.test(version))
    return {
      why: `no flag map for ${component} ${version}, and it is not a release a map can be built for`,
    };
  const served = goModDownload(KUBERNETES, version, join(repoRoot, 'harness', 'flags', 'analyzer'));
  if ('why' in served)
    return {
      why: `no flag map for ${component} ${version}: the Go module proxy does not serve ${KUBERNETES}@${version} (${served.why})`,
    };
  log.step(`Kubernetes ${version} has no flag map here: building the release's maps`);
  // Built beside the cache, then renamed in whole: another audit sees all of the release or none.
  mkdirSync(dir, { recursive: true });
  const out = mkdtempSync(join(dir, '.build-'));
  try {
    regenerate({ version, outDir: out, log });
    if (!existsSync(join(dir, version))) renameSync(out, join(dir, version));
  } catch (e) {
    return {
      why: `no flag map for ${component} ${version}: ${(e as Error).message.split('\n')[0]}`,
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  return (
    load(component, version, dir) ?? {
      why: `no flag map for ${component} ${version}: its build wrote none to ${join(dir, version)}`,
    }
  );
}

/** What audit and compare map a binary with when no committed map has its version: etcd's or a release's. */
export function mapOnDemand(log: Logger): (component: string, version: string) => OnDemand {
  return (component, version) =>
    component === 'etcd'
      ? etcdMapOnDemand(version, log)
      : kubernetesMapOnDemand(component, version, log);
}

/** A running release's maps and gate tables for an upgrade plan (audit --upgrade-to): committed, else built on demand. */
export function releaseOnDemand(log: Logger, dir = releasesDir()): ReleaseLookup {
  return (version, components) => {
    const maps = new Map<string, FlagMap>();
    // etcd's is the release's own etcd.json (its kubeadm pairing), as a committed release's is.
    for (const c of components) {
      const r = kubernetesMapOnDemand(c, version, log, dir);
      if ('why' in r) return undefined;
      maps.set(c, r.map);
    }
    const gates = join(dir, version, GATE_FILE);
    if (!existsSync(gates)) return undefined;
    return {
      map: (c) => maps.get(c)!,
      gates: JSON.parse(readFileSync(gates, 'utf8')) as GateData,
    };
  };
}
