// Rebuilds flags/data/<version>/feature-gates.json: cmd/featuregates (standard library only, so
// it builds in seconds) parses each gate table of gates.ts's GATE_SOURCES in the module cache.
// etcd's table alone, for an etcd no release pairs with, goes beside its etcd-only flag map.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../lib/log.ts';
import { runSync } from '../../lib/proc.ts';
import { repoRoot } from '../../lib/paths.ts';
import { dataDir } from '../../core/flags/map.ts';
import {
  GATE_FILE,
  GATE_SOURCES,
  gateSourceArgs,
  type GateData,
  type GateTable,
} from '../../core/flags/gates.ts';
import { goBinary, goEnv } from './go.ts';

/** Builds cmd/featuregates and dumps the tables of `args` (module@version/file each). */
function dumpTables(args: string[], log: Logger): GateTable[] {
  const env = goEnv();
  const analyzerDir = join(repoRoot, 'harness', 'flags', 'analyzer');
  const work = mkdtempSync(join(tmpdir(), 'hardwire-gates-'));
  try {
    const bin = join(work, 'featuregates');
    log.step('build featuregates');
    runSync(goBinary(), ['build', '-trimpath', '-o', bin, './cmd/featuregates'], {
      step: 'build featuregates',
      cwd: analyzerDir,
      env,
    });
    log.step(`dump feature-gate tables (${args.length} files)`);
    const res = runSync(bin, ['-modcache', env.GOMODCACHE ?? '', ...args], {
      step: 'featuregates',
      cwd: analyzerDir,
      env,
      hint: `the sources come from the module cache: go mod download them first`,
    });
    return JSON.parse(res.stdout) as GateTable[];
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function write(file: string, data: GateData): string {
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  return file;
}

export function regenerateGates(
  kubernetesVersion: string,
  etcdVersion: string,
  log: Logger,
  outDir = dataDir(kubernetesVersion),
): string {
  const tables = dumpTables(gateSourceArgs(kubernetesVersion, etcdVersion), log);
  return write(join(outDir, GATE_FILE), {
    kubernetesVersion,
    etcdVersion,
    tables,
    components: Object.fromEntries(Object.entries(GATE_SOURCES).map(([c, s]) => [c, [...s]])),
  });
}

/** etcd's gate table alone at `etcdVersion` (no Kubernetes release: kubernetesVersion ""), into `file`. */
export function regenerateEtcdGates(etcdVersion: string, log: Logger, file: string): string {
  const tables = dumpTables(
    gateSourceArgs('', etcdVersion).filter((a) => a.startsWith('go.etcd.io/')),
    log,
  );
  return write(file, {
    kubernetesVersion: '',
    etcdVersion,
    tables,
    components: { etcd: [...GATE_SOURCES.etcd!] },
  });
}
