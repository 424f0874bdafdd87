// `pnpm bench suite`: each test file's wall time, split into what its lab setup cost (boot, wire,
// save, restore, gate: written by test/helpers/lab.ts to $HARDWIRE_PROFILE) and the rest (body).
// Read from a run, never estimated:
//   pnpm bench suite                     runs the suite as `pnpm test` does (unit, then the lab lanes) with the profile on
//   pnpm bench suite [vitest args...]    runs vitest with those arguments (files, --project) instead
//   pnpm bench suite --from DIR          prints the profile of an earlier run (.ci/run leaves one in out/ci-profile)
// One vitest.json per vitest process: vitest.json, and vitest-lane<N>.json for each lab lane.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { $ } from 'zx';
import { repoRoot } from '../lib/paths.ts';
import { UNIT_TESTS } from '../vitest.unit.config.ts';

const UNIT = new Set(UNIT_TESTS);

const PHASES = ['boot', 'wire', 'save', 'restore', 'gate'] as const;
type Phase = (typeof PHASES)[number];

interface FileRow {
  file: string;
  project: string;
  report: string;
  wallMs: number;
  tests: number;
  failed: number;
  phases: Record<Phase, number>;
}

interface Report {
  startTime: number;
  testResults: {
    name: string;
    startTime: number;
    endTime: number;
    status?: string;
    message?: string;
    assertionResults: { status: string; fullName?: string; failureMessages?: string[] }[];
  }[];
}

/** A test file's path in its clone (the run may come from another clone, as .ci/run's does). */
const repoPath = (abs: string) => abs.slice(abs.lastIndexOf('/test/') + 1);

/** Every vitest JSON report of a run, by file name. */
function readReports(dir: string): Map<string, Report> {
  const names = readdirSync(dir)
    .filter((f) => /^vitest(-lane\d+)?\.json$/.test(f))
    .sort();
  return new Map(names.map((f) => [f, JSON.parse(readFileSync(join(dir, f), 'utf8')) as Report]));
}

function rows(dir: string, reports = readReports(dir)): FileRow[] {
  const reportOf = new Map(
    [...reports].flatMap(([name, r]) => r.testResults.map((t) => [t, name] as const)),
  );
  const phases = new Map<string, Record<Phase, number>>();
  const jsonl = join(dir, 'phases.jsonl');
  if (existsSync(jsonl)) {
    for (const line of readFileSync(jsonl, 'utf8').split('\n').filter(Boolean)) {
      const r = JSON.parse(line) as { file: string; phase: Phase; ms: number };
      const p = phases.get(r.file) ?? { boot: 0, wire: 0, save: 0, restore: 0, gate: 0 };
      p[r.phase] += r.ms;
      phases.set(r.file, p);
    }
  }
  return [...reports]
    .flatMap(([name, report]) => {
      // vitest's startTime comes after the file's beforeAll (where a lab boots and wires); in a lane,
      // one file at a time, a file's wall is from the previous file's end (or the lane's start) to its own.
      const lane = name !== 'vitest.json';
      const ends = report.testResults.map((t) => t.endTime).sort((a, b) => a - b);
      const since = (end: number) => ends.filter((e) => e < end).at(-1) ?? report.startTime;
      return report.testResults.map((t) => ({
        t,
        file: repoPath(t.name),
        wallMs: lane ? t.endTime - since(t.endTime) : t.endTime - t.startTime,
      }));
    })
    .map(({ t, file, wallMs }) => {
      return {
        file,
        project: UNIT.has(file) ? 'unit' : 'lab',
        report: reportOf.get(t)!,
        wallMs,
        tests: t.assertionResults.length,
        failed: t.assertionResults.filter((a) => a.status === 'failed').length,
        phases: phases.get(file) ?? { boot: 0, wire: 0, save: 0, restore: 0, gate: 0 },
      };
    })
    .sort((a, b) => b.wallMs - a.wallMs);
}

const s = (ms: number) => (ms / 1000).toFixed(1);

function print(dir: string): void {
  const all = rows(dir);
  const lab = all.filter((r) => r.project === 'lab');
  const unit = all.filter((r) => r.project === 'unit');
  const sum = (xs: FileRow[], f: (r: FileRow) => number) => xs.reduce((n, r) => n + f(r), 0);
  const w = Math.max(4, ...lab.map((r) => r.file.length));
  const out: string[] = [];
  const reports = readReports(dir);
  const span = (rs: Report[]) =>
    Math.max(...rs.flatMap((r) => r.testResults.map((t) => t.endTime))) -
    Math.min(...rs.map((r) => r.startTime));
  out.push(
    `profile ${relative(repoRoot, dir) || dir}: ${all.length} files, ${sum(all, (r) => r.tests)} tests, ${sum(all, (r) => r.failed)} failed; vitest wall ${s(span([...reports.values()]))} s`,
  );
  // Lanes run side by side: each lane's wall (first start to last end) and the sum of its files.
  for (const [name, report] of reports) {
    const files = all.filter((r) => r.report === name);
    out.push(
      `  ${name}: ${files.length} files, wall ${s(span([report]))} s, files' sum ${s(sum(files, (r) => r.wallMs))} s`,
    );
  }
  out.push(
    `${'lab file'.padEnd(w)}  ${['wall s', ...PHASES, 'body'].map((h) => h.padStart(7)).join(' ')}`,
  );
  for (const r of lab) {
    const setup = PHASES.reduce((n, p) => n + r.phases[p], 0);
    out.push(
      `${r.file.padEnd(w)}  ${[r.wallMs, ...PHASES.map((p) => r.phases[p]), r.wallMs - setup].map((v) => s(v).padStart(7)).join(' ')}`,
    );
  }
  const setupAll = PHASES.map((p) => sum(lab, (r) => r.phases[p]));
  const labWall = sum(lab, (r) => r.wallMs);
  out.push(
    `${'lab sum'.padEnd(w)}  ${[labWall, ...setupAll, labWall - setupAll.reduce((a, b) => a + b, 0)].map((v) => s(v).padStart(7)).join(' ')}`,
  );
  // Unit files run in parallel: their longest file, not their sum, is what the run waits for.
  out.push(
    `unit files: ${unit.length}, in parallel; longest ${unit[0] ? `${unit[0].file} ${s(unit[0].wallMs)} s` : '-'}`,
  );
  // Last, so a log's tail names what failed: each failed test (or file that failed outside a test)
  // with the first line of its error.
  const first = (m: string | undefined) =>
    (m ?? '')
      .replace(/\x1b\[[0-9;]*m/g, '')
      .split('\n')
      .find((l) => l.trim()) ?? '';
  for (const report of reports.values())
    for (const t of report.testResults) {
      const failed = t.assertionResults.filter((a) => a.status === 'failed');
      for (const a of failed)
        out.push(
          `FAILED ${repoPath(t.name)} > ${a.fullName}: ${first(a.failureMessages?.[0])}`.slice(
            0,
            400,
          ),
        );
      if (!failed.length && t.status === 'failed')
        out.push(`FAILED ${repoPath(t.name)}: ${first(t.message)}`.slice(0, 400));
    }
  process.stdout.write(`${out.join('\n')}\n`);
}

const args = process.argv.slice(2);
const from = args.indexOf('--from');
if (from >= 0) {
  const dir = args[from + 1];
  if (!dir || !existsSync(dir) || readReports(dir).size === 0) {
    process.stderr.write(
      `error: --from: ${dir ?? '(missing)'} holds no vitest.json; pass the directory of a profiled run (out/ci-profile after .ci/run)\n`,
    );
    process.exit(2);
  }
  print(dir);
} else {
  const dir = join(
    repoRoot,
    'out',
    `suite-profile-${new Date().toISOString().replace(/[:.]/g, '-')}`,
  );
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const t0 = Date.now();
  const sh = $({
    cwd: repoRoot,
    stdio: 'inherit',
    nothrow: true,
    env: { ...process.env, HARDWIRE_PROFILE: join(dir, 'phases.jsonl') },
  });
  const vitest = join(repoRoot, 'node_modules', '.bin', 'vitest');
  let code: number | null;
  if (args.length > 0) code = (await sh`${vitest} run ${args}`).exitCode;
  else {
    const unit = (await sh`${vitest} run --project unit`).exitCode;
    const lab = (await sh`${process.execPath} ${join(repoRoot, 'scripts', 'test-lanes.ts')}`)
      .exitCode;
    code = unit === 0 ? lab : unit;
  }
  process.stdout.write(`the run exited ${code} after ${s(Date.now() - t0)} s\n`);
  if (readReports(dir).size > 0) print(dir);
  process.exit(code ?? 1);
}
