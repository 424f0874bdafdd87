// Times `hardwire lab up` for 3 hosts: cold (no cached base rootfs, so debootstrap runs), warm (cached
// rootfs, no lab), and again on the healthy lab (idempotent). Needs root. Usage: node scripts/bench-lab.ts [--warm-only]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cacheDir, repoRoot } from '../lib/paths.ts';

const NAME = 'hwbench';
const HOSTS = '3';
const state = mkdtempSync(join(tmpdir(), 'hardwire-bench-state-'));

function cli(args: string[], env: NodeJS.ProcessEnv): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [join(repoRoot, 'cli', 'hardwire.ts'), 'lab', ...args, '--name', NAME, '--quiet'], {
    env: { ...process.env, HARDWIRE_STATE: state, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) throw new Error(`hardwire lab ${args.join(' ')} exited ${r.status}`);
  return s;
}

const rows: [string, string][] = [];
const fmt = (s: number) => `${s.toFixed(2)} s`;
try {
  if (!process.argv.includes('--warm-only')) {
    // A fresh cache dir makes the run truly cold without touching the user's cached rootfs.
    const cold = mkdtempSync(join(tmpdir(), 'hardwire-bench-cache-'));
    try {
      const t = cli(['up', '--hosts', HOSTS], { HARDWIRE_CACHE: cold });
      const stamp = JSON.parse(readFileSync(join(cold, 'lab', 'rootfs-bookworm', '.hardwire-rootfs.json'), 'utf8')) as { debootstrapSeconds: number };
      rows.push(['lab up, cold (3 hosts, includes debootstrap)', fmt(t)], ['  of which debootstrap', fmt(stamp.debootstrapSeconds)]);
      cli(['down'], { HARDWIRE_CACHE: cold });
    } finally {
      rmSync(cold, { recursive: true, force: true });
    }
  }
  cli(['up', '--hosts', HOSTS], { HARDWIRE_CACHE: cacheDir() }); // make sure the real cache is built
  cli(['down'], {});
  rows.push(['lab up, warm (3 hosts, cached rootfs)', fmt(cli(['up', '--hosts', HOSTS], {}))]);
  rows.push(['lab up, again on the healthy lab', fmt(cli(['up'], {}))]);
  rows.push(['lab down (3 hosts)', fmt(cli(['down'], {}))]);
} finally {
  spawnSync(process.execPath, [join(repoRoot, 'cli', 'hardwire.ts'), 'lab', 'down', '--name', NAME, '--quiet'], { env: { ...process.env, HARDWIRE_STATE: state }, stdio: 'inherit' });
  rmSync(state, { recursive: true, force: true });
}
const w = Math.max(...rows.map(([k]) => k.length));
for (const [k, v] of rows) process.stdout.write(`${k.padEnd(w)}  ${v}\n`);
