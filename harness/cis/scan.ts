// Runs the real kube-bench on one host: copies the binary, its cfg/ and hardwire's paths
// (cis/hardwire/config.yaml, as cfg/<benchmark>/config.yaml) to a fresh temporary directory, runs the
// benchmark's targets for the host's roles, and removes the directory whatever happened. Every step
// goes through Wet; kube-bench itself only reads (ps, stat, find).
import { readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { WireContext } from '../../core/apply/context.ts';
import type { Host } from '../../core/inventory/load.ts';
import { repoRoot } from '../../lib/paths.ts';
import { run } from '../../lib/proc.ts';
import { StepError } from '../../lib/errors.ts';
import { parseReport, summarize, type HostReport } from './report.ts';
import type { Session } from '../../core/transport/index.ts';
import { CIS_BENCHMARK } from '../../core/validate/cis-checks.ts';

/** The benchmark whose flag checks validate/weakening.ts also enforces on extraArgs. */
export const BENCHMARK = CIS_BENCHMARK;
export const HARDWIRE_CONFIG = join(repoRoot, 'harness', 'cis', 'hardwire', 'config.yaml');
export const K0S_CONFIG = join(repoRoot, 'harness', 'cis', 'k0s', 'config.yaml');

/** master's checks about etcd's unit and data dir (1.1.7, 1.1.8, 1.1.11, 1.1.12) need etcd on the host. */
const ETCD_FILE_CHECKS = ['1.1.7', '1.1.8', '1.1.11', '1.1.12'];

export interface KubeBench {
  binary: string;
  cfgDir: string;
}

/** The targets a host's roles call for, and the checks that cannot apply to it. */
export function targetsFor(host: Pick<Host, 'isEtcd' | 'isControlPlane' | 'isWorker'>): {
  targets: string[];
  skipped: HostReport['skipped'];
} {
  const targets = [
    ...(host.isControlPlane ? ['master'] : []),
    ...(host.isEtcd ? ['etcd'] : []),
    ...(host.isControlPlane ? ['controlplane'] : []),
    ...(host.isWorker ? ['node'] : []),
  ];
  const skipped =
    host.isControlPlane && !host.isEtcd
      ? {
          ids: ETCD_FILE_CHECKS,
          why: 'this control-plane host runs no etcd: its unit and data dir are on the etcd hosts',
        }
      : undefined;
  return { targets, skipped };
}

/** cfg/ as one gzipped tar, to unpack on the host in one round trip. */
async function cfgTarball(cfgDir: string): Promise<Buffer> {
  const file = join(
    tmpdir(),
    `hardwire-cis-cfg-${process.pid}-${randomBytes(4).toString('hex')}.tar.gz`,
  );
  try {
    await run('tar', ['-czf', file, '-C', dirname(cfgDir), 'cfg'], {
      step: 'cis: pack kube-bench cfg/',
    });
    return await readFile(file);
  } finally {
    await rm(file, { force: true });
  }
}

/**
 * How a scan touches its host: hardwire's hosts through Wet (every write recorded, none in a dry
 * run); the throwaway lab hosts of the kubeadm and k0s planes through their own session.
 */
export type HostRunner = <T>(msg: string, fn: (s: Session) => Promise<T>) => Promise<T | undefined>;

export interface ScanSpec {
  host: string;
  roles: string[];
  targets: string[];
  skipped: HostReport['skipped'];
  /** A platform's paths, put at cfg/<benchmark>/config.yaml; none means the stock profile (kubeadm's). */
  config?: string;
}

export async function scanHost(
  ctx: WireContext,
  host: Host,
  bench: KubeBench,
): Promise<HostReport> {
  const { targets, skipped } = targetsFor(host);
  const roles = [
    ...(host.isEtcd ? ['etcd'] : []),
    ...(host.isControlPlane ? ['control-plane'] : []),
    ...(host.isWorker ? ['worker'] : []),
  ];
  const runner: HostRunner = (msg, fn) => ctx.wet.run(host.name, msg, fn);
  return scanWith(
    runner,
    { host: host.name, roles, targets, skipped, config: HARDWIRE_CONFIG },
    bench,
  );
}

export async function scanWith(
  runner: HostRunner,
  spec: ScanSpec,
  bench: KubeBench,
): Promise<HostReport> {
  const { targets, skipped } = spec;
  const [binary, cfg, config] = await Promise.all([
    readFile(bench.binary),
    cfgTarball(bench.cfgDir),
    spec.config ? readFile(spec.config) : undefined,
  ]);
  const started = Date.now();
  const mk = await runner('make a temporary directory for kube-bench', (s) =>
    s.exec(['mktemp', '-d', '/tmp/hardwire-cis.XXXXXX']),
  );
  const dir = mk?.stdout.trim();
  if (!dir || !/^\/tmp\/hardwire-cis\.\w+$/.test(dir))
    throw new StepError('cis', `mktemp answered "${dir ?? ''}"`, { host: spec.host });
  try {
    await runner(`copy kube-bench (${Math.round(binary.length / 1e6)} MB) to ${dir}`, (s) =>
      s.writeFileAtomic(`${dir}/kube-bench`, binary, { mode: 0o755, owner: 'root:root' }),
    );
    await runner(`unpack kube-bench's cfg/ in ${dir}`, (s) =>
      s.exec(['tar', '-xzf', '-', '-C', dir, '--no-same-owner'], { stdin: cfg }),
    );
    if (config)
      await runner(`put the plane's paths at ${dir}/cfg/${BENCHMARK}/config.yaml`, (s) =>
        s.writeFileAtomic(`${dir}/cfg/${BENCHMARK}/config.yaml`, config, {
          mode: 0o644,
          owner: 'root:root',
        }),
      );
    const argv = [
      `${dir}/kube-bench`,
      '--config-dir',
      `${dir}/cfg`,
      '--config',
      `${dir}/cfg/config.yaml`,
      '--benchmark',
      BENCHMARK,
      'run',
      '--targets',
      targets.join(','),
      '--json',
      ...(skipped ? ['--skip', skipped.ids.join(',')] : []),
    ];
    const r = await runner(`kube-bench run --targets ${targets.join(',')}`, (s) =>
      s.exec(argv, { allowFail: true, timeoutMs: 300_000 }),
    );
    if (!r) throw new StepError('cis', 'kube-bench did not run (dry run)', { host: spec.host });
    if (r.code !== 0)
      throw new StepError('cis', `kube-bench exited ${r.code}`, {
        host: spec.host,
        detail: `${r.stderr}\n${r.stdout}`.trim().split('\n').slice(-12),
      });
    return summarize(parseReport(r.stdout, spec.host), {
      host: spec.host,
      roles: spec.roles,
      targets,
      skipped,
      seconds: Math.round((Date.now() - started) / 100) / 10,
    });
  } finally {
    await runner(`remove ${dir}`, (s) => s.exec(['rm', '-rf', '--', dir])).catch((err: unknown) =>
      console.error(`[${spec.host}] could not remove ${dir}: ${(err as Error).message}`),
    );
  }
}
