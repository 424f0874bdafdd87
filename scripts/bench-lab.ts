// Times `hardwire lab up` for 3 hosts: cold (no cached base rootfs, so debootstrap runs), warm (cached
// rootfs, no lab), and again on the healthy lab (idempotent). Needs root. Usage: node scripts/bench-lab.ts [--warm-only]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { $ } from 'zx';
import { cacheDir, repoRoot } from '../lib/paths.ts';

const NAME = 'hwbench';
const HOSTS = '3';
const state = mkdtempSync(join(tmpdir(), 'hardwire-bench-state-'));

const hardwire = join(repoRoot, 'cli', 'hardwire.ts');

async function cli(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const t0 = process.hrtime.bigint();
  const r = await $({
    env: { ...process.env, HARDWIRE_STATE: state, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
    nothrow: true,
  })`${process.execPath} ${hardwire} lab ${args} --name ${NAME} --quiet`;
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.exitCode !== 0) throw new Error(`hardwire lab ${args.join(' ')} exited ${r.exitCode}`);
  return s;
}

const rows: [string, string][] = [];
const fmt = (s: number) => `${s.toFixed(2)} s`;
try {
  if (!process.argv.includes('--warm-only')) {
    // A fresh cache dir makes the run truly cold without touching the user's cached rootfs.
    const cold = mkdtempSync(join(tmpdir(), 'hardwire-bench-cache-'));
    try {
      const t = await cli(['up', '--hosts', HOSTS], { HARDWIRE_CACHE: cold });
      const stamp = JSON.parse(
        readFileSync(join(cold, 'lab', 'rootfs-bookworm', '.hardwire-rootfs.json'), 'utf8'),
      ) as { debootstrapSeconds: number };
      rows.push(
        ['lab up, cold (3 hosts, includes debootstrap)', fmt(t)],
        ['  of which debootstrap', fmt(stamp.debootstrapSeconds)],
      );
      await cli(['down'], { HARDWIRE_CACHE: cold });
    } finally {
      rmSync(cold, { recursive: true, force: true });
    }
  }
  await cli(['up', '--hosts', HOSTS], { HARDWIRE_CACHE: cacheDir() }); // make sure the real cache is built
  await cli(['down'], {});
  rows.push([
    'lab up, warm (3 hosts, cached rootfs)',
    fmt(await cli(['up', '--hosts', HOSTS], {})),
  ]);
  rows.push(['lab up, again on the healthy lab', fmt(await cli(['up'], {}))]);
  rows.push(['lab down (3 hosts)', fmt(await cli(['down'], {}))]);
} finally {
  await $({
    env: { ...process.env, HARDWIRE_STATE: state },
    stdio: 'inherit',
    nothrow: true,
  })`${process.execPath} ${hardwire} lab down --name ${NAME} --quiet`;
  rmSync(state, { recursive: true, force: true });
}
const w = Math.max(...rows.map(([k]) => k.length));
for (const [k, v] of rows) process.stdout.write(`${k.padEnd(w)}  ${v}\n`);
