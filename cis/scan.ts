// Runs the real kube-bench on one host: copies the binary, its cfg/ and hardwire's paths
// (cis/hardwire/config.yaml, as cfg/<benchmark>/config.yaml) to a fresh temporary directory, runs the
// benchmark's targets for the host's roles, and removes the directory whatever happened. Every step
// goes through Wet; kube-bench itself only reads (ps, stat, find).
import { readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { WireContext } from '../apply/context.ts';
import type { Host } from '../inventory/load.ts';
import { repoRoot } from '../lib/paths.ts';
import { run } from '../lib/proc.ts';
import { StepError } from '../lib/errors.ts';
import { parseReport, summarize, type HostReport } from './report.ts';

export const BENCHMARK = 'cis-1.12';
export const HARDWIRE_CONFIG = join(repoRoot, 'cis', 'hardwire', 'config.yaml');

/** master's checks about etcd's unit and data dir (1.1.7, 1.1.8, 1.1.11, 1.1.12) need etcd on the host. */
const ETCD_FILE_CHECKS = ['1.1.7', '1.1.8', '1.1.11', '1.1.12'];

export interface KubeBench { binary: string; cfgDir: string }

/** The targets a host's roles call for, and the checks that cannot apply to it. */
export function targetsFor(host: Pick<Host, 'isEtcd' | 'isControlPlane'>): { targets: string[]; skipped: HostReport['skipped'] } {
  const targets = [...(host.isControlPlane ? ['master'] : []), ...(host.isEtcd ? ['etcd'] : []), ...(host.isControlPlane ? ['controlplane'] : [])];
  const skipped = host.isControlPlane && !host.isEtcd
    ? { ids: ETCD_FILE_CHECKS, why: 'this control-plane host runs no etcd: its unit and data dir are on the etcd hosts' }
    : undefined;
  return { targets, skipped };
}

/** cfg/ as one gzipped tar, to unpack on the host in one round trip. */
async function cfgTarball(cfgDir: string): Promise<Buffer> {
  const file = join(tmpdir(), `hardwire-cis-cfg-${process.pid}-${randomBytes(4).toString('hex')}.tar.gz`);
  try {
    await run('tar', ['-czf', file, '-C', dirname(cfgDir), 'cfg'], { step: 'cis: pack kube-bench cfg/' });
    return await readFile(file);
  } finally {
    await rm(file, { force: true });
  }
}

export async function scanHost(ctx: WireContext, host: Host, bench: KubeBench): Promise<HostReport> {
  const { targets, skipped } = targetsFor(host);
  const roles = [...(host.isEtcd ? ['etcd'] : []), ...(host.isControlPlane ? ['control-plane'] : [])];
  const [binary, cfg, config] = await Promise.all([readFile(bench.binary), cfgTarball(bench.cfgDir), readFile(HARDWIRE_CONFIG)]);
  const started = Date.now();
  const mk = await ctx.wet.run(host.name, 'make a temporary directory for kube-bench', (s) => s.exec(['mktemp', '-d', '/tmp/hardwire-cis.XXXXXX']));
  const dir = mk?.stdout.trim();
  if (!dir || !/^\/tmp\/hardwire-cis\.\w+$/.test(dir)) throw new StepError('cis', `mktemp answered "${dir ?? ''}"`, { host: host.name });
  try {
    await ctx.wet.run(host.name, `copy kube-bench (${Math.round(binary.length / 1e6)} MB) to ${dir}`, (s) => s.writeFileAtomic(`${dir}/kube-bench`, binary, { mode: 0o755, owner: 'root:root' }));
    await ctx.wet.run(host.name, `unpack kube-bench's cfg/ in ${dir}`, (s) => s.exec(['tar', '-xzf', '-', '-C', dir, '--no-same-owner'], { stdin: cfg }));
    await ctx.wet.run(host.name, `put hardwire's paths at ${dir}/cfg/${BENCHMARK}/config.yaml`, (s) => s.writeFileAtomic(`${dir}/cfg/${BENCHMARK}/config.yaml`, config, { mode: 0o644, owner: 'root:root' }));
    const argv = [`${dir}/kube-bench`, '--config-dir', `${dir}/cfg`, '--config', `${dir}/cfg/config.yaml`, '--benchmark', BENCHMARK,
      'run', '--targets', targets.join(','), '--json', ...(skipped ? ['--skip', skipped.ids.join(',')] : [])];
    const r = await ctx.wet.run(host.name, `kube-bench run --targets ${targets.join(',')}`, (s) => s.exec(argv, { allowFail: true, timeoutMs: 300_000 }));
    if (!r) throw new StepError('cis', 'kube-bench did not run (dry run)', { host: host.name });
    if (r.code !== 0) throw new StepError('cis', `kube-bench exited ${r.code}`, { host: host.name, detail: `${r.stderr}\n${r.stdout}`.trim().split('\n').slice(-12) });
    return summarize(parseReport(r.stdout, host.name), { host: host.name, roles, targets, skipped, seconds: Math.round((Date.now() - started) / 100) / 10 });
  } finally {
    await ctx.wet.run(host.name, `remove ${dir}`, (s) => s.exec(['rm', '-rf', '--', dir])).catch((err: unknown) => ctx.log.warn(`[${host.name}] could not remove ${dir}: ${(err as Error).message}`));
  }
}
