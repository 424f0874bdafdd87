// `pnpm test`'s lab files: the lanes of test/lanes.ts side by side, one `vitest run --project lab`
// each, its lines prefixed with "[lab N] ". Every lane runs to its end even when another fails, so
// one run shows every failure.
//   node scripts/test-lanes.ts            all lanes at once
//   HARDWIRE_LANES=1 node scripts/test-lanes.ts    the same files in one lane (a busy or 1-core machine)
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { LAB_LANES } from '../test/lanes.ts';
import { repoRoot } from '../lib/paths.ts';

function lanes(): (readonly string[])[] {
  const want = process.env.HARDWIRE_LANES;
  if (want === undefined || want === '') return [...LAB_LANES];
  const n = Number(want);
  if (!Number.isInteger(n) || n < 1 || n > LAB_LANES.length) {
    console.error(
      `error: HARDWIRE_LANES: must be a whole number from 1 to ${LAB_LANES.length}; unset it to run every lane`,
    );
    process.exit(2);
  }
  // Whole lanes merged, so files that share a wired lab stay in one process.
  const out: string[][] = Array.from({ length: n }, () => []);
  LAB_LANES.forEach((files, i) => out[i % n]!.push(...files));
  return out;
}

const vitest = join(repoRoot, 'node_modules', 'vitest', 'vitest.mjs');
const children: ChildProcess[] = [];

function runLane(
  n: number,
  files: readonly string[],
): Promise<{ n: number; code: number | null; signal: string | null; seconds: number }> {
  const started = Date.now();
  // Absolute paths: vitest's file filters match substrings, and test/wire.test.ts must not pick workers-wire.
  const child = spawn(
    process.execPath,
    [vitest, 'run', '--project', 'lab', ...files.map((f) => join(repoRoot, f))],
    {
      cwd: repoRoot,
      env: { ...process.env, HARDWIRE_LANE: String(n) },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) =>
      process.stdout.write(`[lab ${n}] ${line}\n`),
    );
  }
  return new Promise((resolve) =>
    child.on('close', (code, signal) =>
      resolve({ n, code, signal, seconds: (Date.now() - started) / 1000 }),
    ),
  );
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    for (const c of children) c.kill(sig);
  });
}

const plan = lanes();
console.log(
  `lab tests: ${plan.length} lane(s) side by side: ${plan.map((f, i) => `lab ${i + 1} (${f.length} files)`).join(', ')}`,
);
const results = await Promise.all(plan.map((files, i) => runLane(i + 1, files)));
for (const r of results)
  console.log(
    `lab ${r.n}: ${r.code === 0 ? 'passed' : `failed (${r.signal ?? `exit ${r.code}`})`} in ${r.seconds.toFixed(0)} s`,
  );
const failed = results.filter((r) => r.code !== 0);
if (failed.length > 0) {
  console.error(
    `error: lab lane(s) ${failed.map((r) => r.n).join(', ')} failed; their lines above start with "[lab N]"`,
  );
  process.exit(1);
}
