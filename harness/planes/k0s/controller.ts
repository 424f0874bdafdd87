// One k0s controller on one lab host: stage the binaries, install and start it as k0s does
// (`k0s install controller` writes the k0scontroller unit), wait for its apiserver, read its
// process tree from /proc.
import { statSync } from 'node:fs';
import { StepError } from '../../../lib/errors.ts';
import { abort, orAbort, retry } from '../../../lib/retry.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { showUnit } from '../../../core/transport/systemctl.ts';
import type { Session } from '../../../core/transport/index.ts';
import type { EnsuredBinary } from '../../../core/components/binaries/index.ts';
import type { PlaneData } from '../types.ts';
import { K0S_BIN, K0S_CONFIG, K0S_DATA } from './config.ts';
import { CHILD_OF } from './components.ts';

export const JOIN_TOKEN = '/etc/k0s/controller.token';

/** Name each binary gets in k0s's bin dir: k0s looks them up by these names (pkg/assets/stage.go). */
export function binDirName(b: EnsuredBinary): string {
  return b.name === 'k0s-etcd' ? 'etcd' : b.name;
}

/** k0s to /usr/local/bin, the components to /var/lib/k0s/bin, in one tar stream. */
export async function stageBinaries(
  s: Session,
  k0s: EnsuredBinary,
  parts: EnsuredBinary[],
  config: string,
  token?: string,
): Promise<void> {
  const file = (path: string) => ({ file: path, size: statSync(path).size });
  await s.exec(['mkdir', '-p', `${K0S_DATA}/bin`, '/etc/k0s']);
  await s.writeFilesAtomic([
    { path: K0S_BIN, mode: 0o755, data: file(k0s.path) },
    ...parts.map((b) => ({
      path: `${K0S_DATA}/bin/${binDirName(b)}`,
      mode: 0o750,
      data: file(b.path),
    })),
    { path: K0S_CONFIG, mode: 0o600, data: Buffer.from(config) },
    ...(token ? [{ path: JOIN_TOKEN, mode: 0o600, data: Buffer.from(token) }] : []),
  ]);
}

/** Runs argv on the host, recording the step; throws with the output tail when it fails. */
export async function step(
  plane: PlaneData,
  s: Session,
  argv: string[],
  name: string,
  timeoutMs = 120_000,
): Promise<string> {
  const t0 = performance.now();
  const r = await s.exec(argv, { allowFail: true, timeoutMs });
  const out = `${r.stdout}${r.stderr}`.trim();
  plane.steps.push({
    step: `${s.host.name}: ${name}`,
    argv,
    ms: Math.round(performance.now() - t0),
    ok: r.code === 0,
    output: out.split('\n').slice(-4).join('\n'),
  });
  if (r.code !== 0)
    throw new StepError('compare-k0s', `${argv.join(' ')} exited ${r.code}`, {
      host: s.host.name,
      detail: out.split('\n').slice(-10),
    });
  return r.stdout;
}

/** `k0s install controller` + `systemctl start k0scontroller`, then /readyz through k0s's own kubectl. */
export async function startController(
  plane: PlaneData,
  s: Session,
  join: boolean,
  timeoutMs = 240_000,
  extra: string[] = [],
): Promise<number> {
  await step(
    plane,
    s,
    [
      K0S_BIN,
      'install',
      'controller',
      '--config',
      K0S_CONFIG,
      ...(join ? ['--token-file', JOIN_TOKEN] : []),
      ...extra,
    ],
    `k0s install controller${join ? ' (join)' : ''}`,
  );
  const t0 = performance.now();
  await step(plane, s, ['systemctl', 'start', 'k0scontroller'], 'systemctl start k0scontroller');
  let stderr = '';
  await retry(
    async () => {
      const r = await orAbort(
        s.exec([K0S_BIN, 'kubectl', 'get', '--raw', '/readyz'], {
          allowFail: true,
          timeoutMs: 20_000,
        }),
      );
      stderr = r.stderr;
      if (r.code !== 0 || r.stdout.trim() !== 'ok') throw new Error('not ready');
    },
    {
      timeoutMs,
      intervalMs: 1000,
      onTimeout: async () => {
        const journal = await s.exec(
          ['journalctl', '-u', 'k0scontroller', '--no-pager', '-n', '15', '-o', 'cat'],
          { allowFail: true },
        );
        throw new StepError(
          'compare-k0s',
          `k0s apiserver did not answer /readyz within ${timeoutMs / 1000} s`,
          {
            host: s.host.name,
            detail: [...stderr.split('\n').slice(-3), ...journal.stdout.split('\n')],
          },
        );
      },
    },
  );
  const ms = Math.round(performance.now() - t0);
  plane.steps.push({ step: `${s.host.name}: k0scontroller start to /readyz ok`, ms, ok: true });
  return ms;
}

/** `k0s token create` asks the controller's status socket, which can appear after /readyz: retry for 60 s. */
export async function createToken(
  plane: PlaneData,
  s: Session,
  role: 'controller' | 'worker',
): Promise<string> {
  const argv = [K0S_BIN, 'token', 'create', `--role=${role}`, '--expiry=1h'];
  return retry(
    async () => {
      const r = await orAbort(s.exec(argv, { allowFail: true, timeoutMs: 30_000 }));
      if (r.code === 0 && r.stdout.trim()) {
        plane.steps.push({
          step: `${s.host.name}: k0s token create --role=${role}`,
          argv,
          ms: 0,
          ok: true,
        });
        return r.stdout.trim();
      }
      const err = new StepError('compare-k0s', `${argv.join(' ')} exited ${r.code}`, {
        host: s.host.name,
        detail: r.stderr.trim().split('\n').slice(-5),
      });
      // Only a status socket that is not up yet is worth waiting for.
      throw /status\.sock|connection refused/.test(r.stderr) ? err : abort(err);
    },
    { timeoutMs: 60_000, intervalMs: 1000 },
  );
}

export interface Proc {
  pid: number;
  ppid: number;
  argv: string[];
}

/** A k0s unit's (k0scontroller, k0sworker) main PID and every process below it, with argv from /proc/<pid>/cmdline. */
export async function processTree(
  s: Session,
  unit = 'k0scontroller',
): Promise<{ main: Proc; descendants: Proc[] }> {
  const mainPid = Number((await showUnit(s, unit, ['MainPID'])).MainPID ?? 0);
  if (!mainPid)
    throw new StepError('compare-k0s', `${unit} has no main PID (not running)`, {
      host: s.host.name,
    });
  const ps = (await s.exec(['ps', '-e', '-o', 'pid=,ppid='])).stdout
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/).map(Number) as [number, number]);
  const argvOf = async (pid: number) =>
    (await s.exec(['cat', `/proc/${pid}/cmdline`], { allowFail: true })).stdout
      .split('\0')
      .filter(Boolean);
  const main: Proc = { pid: mainPid, ppid: 1, argv: await argvOf(mainPid) };
  const descendants: Proc[] = [];
  const walk = async (parent: number): Promise<void> => {
    for (const [pid, ppid] of ps.filter(([, pp]) => pp === parent)) {
      const argv = await argvOf(pid);
      // A process that exited between ps and /proc (or a zombie) has no command line: skip it.
      if (argv.length > 0) descendants.push({ pid, ppid, argv });
      await walk(pid);
    }
  };
  await walk(mainPid);
  return { main, descendants };
}

/** "kube-apiserver" for /var/lib/k0s/bin/kube-apiserver; "k0s api" for k0s's own subcommands. */
export function processName(argv: string[]): string {
  const base = (argv[0] ?? '').split('/').pop() ?? '';
  return base === 'k0s' && argv[1] && !argv[1].startsWith('-') ? `k0s ${argv[1]}` : base;
}

/**
 * k0s restarts konnectivity-server whenever the number of controllers changes (--server-count), so
 * a tree read right after a join can miss it. Read until every child k0s supervises is there and
 * two reads 2 s apart agree (at most 90 s), and say so if it never settles.
 */
export async function settledTree(
  s: Session,
  plane: PlaneData,
): Promise<Awaited<ReturnType<typeof processTree>>> {
  const want = Object.values(CHILD_OF).filter((n) => n !== 'keepalived');
  const key = (t: Awaited<ReturnType<typeof processTree>>) =>
    t.descendants
      .map((d) => `${processName(d.argv)}:${d.pid}`)
      .sort()
      .join(' ');
  const namesOf = (t: Awaited<ReturnType<typeof processTree>>) =>
    new Set(t.descendants.map((d) => processName(d.argv)));
  let now = await processTree(s);
  return retry(
    async () => {
      await sleep(2000);
      const last = now;
      now = await orAbort(processTree(s));
      const names = namesOf(now);
      if (key(now) === key(last) && want.every((n) => names.has(n))) return now;
      throw new Error('not settled');
    },
    {
      timeoutMs: 90_000,
      intervalMs: 0,
      onTimeout: () => {
        const names = namesOf(now);
        plane.notes.push(
          `${s.host.name}: k0s's children did not settle within 90 s; read as they were (missing: ${want.filter((n) => !names.has(n)).join(', ') || 'none'})`,
        );
        return now;
      },
    },
  );
}
