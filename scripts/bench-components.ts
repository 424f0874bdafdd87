// pnpm bench components: how long the component builds take on this machine and how much disk
// the caches use. Cold figures only when the Go caches are empty (a fresh machine); otherwise the
// warm figures. Binaries go to a scratch HARDWIRE_CACHE so the real binary cache is left alone;
// the Go module and build caches are the real ones (~/.cache/hardwire/gomod, ~/.cache/go-build).
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { homedir } from 'node:os';
import { parseArgs } from 'node:util';
import { $ } from 'zx';
import { stderrLogger } from '../lib/log.ts';
import { goBuildCache, goModCache } from '../core/components/binaries/go-env.ts';
import { ETCD_NAMES, K0S_NAMES, KUBERNETES_NAMES } from '../core/components/binaries/catalog.ts';
import { type BinaryName } from '../core/components/registry/index.ts';
import { ensureAll } from '../core/components/binaries/index.ts';

const { values } = parseArgs({ options: { json: { type: 'boolean' }, k0s: { type: 'boolean' } } });
const log = stderrLogger();

async function duBytes(paths: string[]): Promise<number> {
  const present = paths.filter((p) => existsSync(p));
  if (present.length === 0) return 0;
  // Go writes and removes files while du walks: du then complains and exits 1, but still prints the total.
  const r = await $({ nothrow: true, quiet: true })`du -sbc ${present}`;
  return Number(/^(\d+)\s+total$/m.exec(r.stdout)?.[1] ?? 0);
}

function isEmpty(dir: string): boolean {
  return (
    !existsSync(dir) ||
    readdirSync(dir).filter((f) => f !== 'README' && f !== 'trim.txt').length === 0
  );
}

const gib = (b: number) => `${(b / 2 ** 30).toFixed(2)} GiB`;

const scratch = mkdtempSync(join(homedir(), '.cache', 'hardwire', 'bench-'));
process.env.HARDWIRE_CACHE = scratch;
const caches = { gomod: goModCache(), gocache: goBuildCache(), binaries: scratch };
const cold = isEmpty(caches.gomod) && isEmpty(caches.gocache);

let peak = 0;
let sampling = true;
const sampler = (async () => {
  while (sampling) {
    peak = Math.max(peak, await duBytes(Object.values(caches)));
    await new Promise((r) => setTimeout(r, 5000));
  }
})();

interface Row {
  what: string;
  seconds?: number;
  error?: string;
}
const rows: Row[] = [];
async function timed(what: string, names: readonly BinaryName[], force: boolean): Promise<void> {
  const t = Date.now();
  try {
    await ensureAll(names, { source: 'build', force, log });
    rows.push({ what, seconds: Math.round((Date.now() - t) / 100) / 10 });
  } catch (err) {
    const detail = (err as { detail?: string[] }).detail?.find((l) =>
      /403|error|cannot|not available/i.test(l),
    );
    rows.push({
      what,
      error: `${(err as Error).message.split('\n')[0]}${detail ? `: ${detail.trim()}` : ''}`,
    });
  }
}

const before = await duBytes([caches.gomod, caches.gocache]);
const mode = cold ? 'cold' : 'warm';
try {
  await timed(`kubernetes v1.36.3 (5 binaries), ${mode}`, KUBERNETES_NAMES, true);
  await timed(`etcd v3.6.8 (etcd, etcdctl), ${mode}`, ETCD_NAMES, true);
  if (values.k0s) await timed(`k0s v1.36.3+k0s.2, ${mode}`, K0S_NAMES, true);
  await timed(
    'kubernetes + etcd again, Go caches warm (forced go build)',
    [...KUBERNETES_NAMES, ...ETCD_NAMES],
    true,
  );
  await timed(
    'kubernetes + etcd again, binaries cached (no go build)',
    [...KUBERNETES_NAMES, ...ETCD_NAMES],
    false,
  );
} finally {
  sampling = false;
  await sampler;
}
peak = Math.max(peak, await duBytes(Object.values(caches)));
const sizes = {
  gomod: await duBytes([caches.gomod]),
  gocache: await duBytes([caches.gocache]),
  binaries: await duBytes([caches.binaries]),
};
rmSync(scratch, { recursive: true, force: true });

const report = {
  machine: { cores: (await import('node:os')).availableParallelism(), go: caches },
  coldMeasured: cold,
  note: cold
    ? 'Go caches were empty: the first two rows are cold builds'
    : 'Go caches were already filled: cold builds not measured (empty ~/.cache/go-build and ~/.cache/hardwire/gomod on a fresh machine to measure them)',
  rows,
  disk: {
    goCachesBeforeBytes: before,
    gomodBytes: sizes.gomod,
    gocacheBytes: sizes.gocache,
    binariesBytes: sizes.binaries,
    peakBytes: peak,
  },
};
if (values.json) {
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} else {
  const out = [`components bench (${report.machine.cores} cores): ${report.note}`];
  for (const r of rows)
    out.push(
      `  ${r.what.padEnd(62)} ${r.seconds !== undefined ? `${r.seconds}s` : `failed: ${r.error}`}`,
    );
  out.push(
    `  disk: module cache ${gib(sizes.gomod)}, build cache ${gib(sizes.gocache)}, binaries ${gib(sizes.binaries)}, peak total ${gib(peak)} (sampled every 5s)`,
  );
  process.stdout.write(`${out.join('\n')}\n`);
}
process.exitCode = rows.some((r) => r.error && !r.what.startsWith('k0s')) ? 1 : 0;
