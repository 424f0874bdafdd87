// etcd's flag map on demand (audit, issue 42): an etcd with no committed map (k0s v1.36.3+k0s.2
// runs 3.6.14) gets one built the way `flags --regenerate --etcd` builds one, from a build list made
// here (`go mod tidy` of etcd's server module at that version, against the Go module proxy), into
// ~/.cache/hardwire/flag-maps/etcd/, where the next audit finds it. A version the proxy does not
// serve is one line, and the process's flags stay listed as unmapped.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../lib/log.ts';
import { cacheDir, repoRoot } from '../../lib/paths.ts';
import { findEtcdMap, type EtcdMap } from '../../core/flags/etcd-maps.ts';
import { GATE_FILE, type GateData } from '../../core/flags/gates.ts';
import type { FlagMap } from '../../core/flags/map.ts';
import { regenerateEtcd } from './etcd-regenerate.ts';
import { goModDownload, tidyModfile } from './go.ts';

export const ETCD_SERVER = 'go.etcd.io/etcd/server/v3';

/** Where maps built on demand are kept: outside the repository, shared by every clone on the machine. */
export function onDemandDir(): string {
  return join(cacheDir(), 'flag-maps', 'etcd');
}

export type OnDemand = { map: FlagMap; file: string } | { why: string };
/** etcd's: its gate table too, which an upgrade plan's etcd hops read. */
export type EtcdOnDemand = EtcdMap | { why: string };

const etcdModuleDir = () => join(repoRoot, 'harness', 'flags', 'analyzer', 'etcd');

/** Whether the module proxy serves etcd's server module at `version`, or go's reason it does not. */
export function servedError(version: string): string | undefined {
  const r = goModDownload(ETCD_SERVER, version, etcdModuleDir());
  return 'why' in r ? r.why : undefined;
}

/** The analyzer's etcd module at `version`: its require, and `go mod tidy` for the rest. Throws with go's last line. */
export function etcdBuildList(version: string, dir: string, log: Logger): string {
  log.step(`go mod tidy for ${ETCD_SERVER}@${version}`);
  return tidyModfile({
    modfile: join(dir, 'go.mod'),
    module: 'hardwire.local/flags/analyzer/etcd',
    cwd: etcdModuleDir(),
    header:
      "Made by harness/flags/etcd-on-demand.ts: etcd's server at this version, for its flag map.",
    requires: [`${ETCD_SERVER} ${version}`],
    timeoutMs: 600_000,
  });
}

function load(version: string, dir: string): EtcdMap | undefined {
  const file = join(dir, `${version}.json`);
  const gates = join(dir, `${version}.${GATE_FILE}`);
  if (!existsSync(file) || !existsSync(gates)) return undefined;
  const map = JSON.parse(readFileSync(file, 'utf8')) as FlagMap;
  const g = JSON.parse(readFileSync(gates, 'utf8')) as GateData;
  if (map.component !== 'etcd' || map.componentVersion !== version || g.etcdVersion !== version)
    return undefined;
  return { map, file, gates: g };
}

/** The committed map, else the one built earlier, else one built now; or why there is none. */
export function etcdMapOnDemand(version: string, log: Logger, dir = onDemandDir()): EtcdOnDemand {
  const committed = findEtcdMap(version);
  if (committed) return committed;
  const cached = load(version, dir);
  if (cached) return cached;
  if (!/^v\d+\.\d+\.\d+$/.test(version))
    return {
      why: `no flag map for etcd ${version}, and it is not a release a map can be built for`,
    };
  log.step(`etcd ${version} has no flag map here: building one from ${ETCD_SERVER}@${version}`);
  const unserved = servedError(version);
  if (unserved)
    return {
      why: `no flag map for etcd ${version}: the Go module proxy does not serve ${ETCD_SERVER}@${version} (${unserved})`,
    };
  const work = mkdtempSync(join(tmpdir(), 'hardwire-etcd-buildlist-'));
  // Built beside the cache, then renamed in, gates first: another audit reads both files or neither.
  mkdirSync(dir, { recursive: true });
  const out = mkdtempSync(join(dir, '.build-'));
  try {
    const modfile = etcdBuildList(version, work, log);
    log.step(`building etcd ${version}'s flag map into ${dir}`);
    regenerateEtcd({ version, outDir: out, modfile, log });
    for (const f of [`${version}.${GATE_FILE}`, `${version}.json`])
      renameSync(join(out, f), join(dir, f));
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  }
  const built = load(version, dir);
  return built ?? { why: `no flag map for etcd ${version}: its build wrote none to ${dir}` };
}
