// The one way hardwire runs a local program: argv only (never a shell), on execa. Every failure is a
// ProcError, a StepError that carries the command, the exit status and the last lines of output,
// so the CLI prints it like any other step failure (exit code 1).
import { closeSync, existsSync, openSync } from 'node:fs';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import type { Options, Result, SyncOptions, SyncResult } from 'execa';
import { StepError } from './errors.ts';
import { shJoin } from './quote.ts';

export interface RunOptions {
  /** The step named in the error (`error: [host] step: message`). */
  step: string;
  host?: string;
  cwd?: string;
  /** The whole environment of the program (like node's spawn): process.env is not merged in. */
  env?: NodeJS.ProcessEnv;
  /** Kill the program (SIGTERM, SIGKILL 5 s later) after this long; a timeout always throws. */
  timeoutMs?: number;
  /** Return a non-zero exit code instead of throwing. A program that could not start, timed out or was killed still throws. */
  allowFail?: boolean;
  /** Written to the program's stdin; otherwise stdin is /dev/null. */
  input?: string | Uint8Array;
  /** Called with each stderr line as it arrives (without the newline), e.g. to show build progress. */
  onStderrLine?: (line: string) => void;
  /** The same for stdout (debootstrap prints its progress there). */
  onStdoutLine?: (line: string) => void;
  /** Appended to "cannot run X: ENOENT" when the program cannot start, e.g. how to install it. */
  hint?: string;
  /** Names the command in the message instead of the full command line (ProcError.command keeps it). */
  label?: string;
  /** What the error detail is the tail of: stderr (default), or stdout and stderr interleaved. */
  tailOf?: 'stderr' | 'all';
  /** How many lines of output the error detail keeps (default 20). */
  tailLines?: number;
  /**
   * stdin, stdout and stderr are hardwire's own (a terminal handed to ssh, or a program's progress
   * shown as it prints); nothing is kept, so an error has no output tail.
   */
  inherit?: boolean;
}

export interface RunResult {
  /** The exit code: 0, or non-zero with allowFail. */
  code: number;
  stdout: string;
  stderr: string;
}

export type ProcFailure = 'spawn' | 'exit' | 'timeout' | 'signal' | 'output';

/** A local program failed: could not start, exited non-zero, timed out or was killed. */
export class ProcError extends StepError {
  readonly failure: ProcFailure;
  /** The program and its arguments, as run. */
  readonly argv: string[];
  /** argv quoted for a POSIX shell (shJoin), ready to paste. */
  readonly command: string;
  /** The program's exit code; undefined when it never ran or was killed. */
  readonly exitStatus: number | undefined;
  /** The signal that ended it (timeouts included). */
  readonly signal: string | undefined;
  /** The system error when it could not start (ENOENT, EACCES). */
  readonly errno: string | undefined;
  readonly stdout: string;
  readonly stderr: string;
  constructor(
    step: string,
    message: string,
    f: {
      failure: ProcFailure;
      argv: string[];
      exitStatus?: number;
      signal?: string;
      errno?: string;
      stdout: string;
      stderr: string;
      host?: string;
      detail: string[];
      cause?: unknown;
    },
  ) {
    super(step, message, { ...(f.host ? { host: f.host } : {}), detail: f.detail, cause: f.cause });
    this.name = 'ProcError';
    this.failure = f.failure;
    this.argv = f.argv;
    this.command = shJoin(f.argv);
    this.exitStatus = f.exitStatus;
    this.signal = f.signal;
    this.errno = f.errno;
    this.stdout = f.stdout;
    this.stderr = f.stderr;
  }
}

/** The last non-empty lines of some output, for StepError detail. */
export function tail(text: string, n = 20): string[] {
  return text
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l !== '')
    .slice(-n);
}

function lineCallback(fn: (line: string) => void) {
  return {
    transform: function* (line: string) {
      fn(line);
      yield line;
    },
  };
}

/** execa's options for a RunOptions; stdio as the caller asked, output kept unless inherited. */
function execaOptions(opts: RunOptions) {
  return {
    cwd: opts.cwd,
    ...(opts.env ? { env: opts.env, extendEnv: false } : {}),
    timeout: opts.timeoutMs ?? 0,
    reject: false,
    stripFinalNewline: false,
    maxBuffer: 256 * 1024 * 1024,
    all: opts.tailOf === 'all',
    ...(opts.inherit
      ? { stdio: 'inherit' as const }
      : {
          ...(opts.input !== undefined ? { input: opts.input } : { stdin: 'ignore' as const }),
          ...(opts.onStdoutLine ? { stdout: lineCallback(opts.onStdoutLine) } : {}),
          ...(opts.onStderrLine ? { stderr: lineCallback(opts.onStderrLine) } : {}),
        }),
  } satisfies Options & SyncOptions;
}

/** Runs `file` with `args` (no shell) and collects its output. Throws ProcError unless it exits 0 (or allowFail). */
export async function run(
  file: string,
  args: readonly string[],
  opts: RunOptions,
): Promise<RunResult> {
  // Loaded on first use: execa is ~130 modules, which a no-op wire never needs.
  const { execa } = await import('execa');
  return settle(await execa(file, args, execaOptions(opts) as Options), file, args, opts);
}

/**
 * run() for synchronous callers (the flag map's verify and regenerate, which their callers and tests
 * use without await): the same options, result and errors, on execaSync.
 */
export function runSync(file: string, args: readonly string[], opts: RunOptions): RunResult {
  if (opts.onStdoutLine || opts.onStderrLine) throw new Error('runSync: line callbacks need run()');
  // Node 22.12+ requires an ES module synchronously; still loaded only when a synchronous run happens.
  const { execaSync } = createRequire(import.meta.url)('execa') as typeof import('execa');
  return settle(execaSync(file, args, execaOptions(opts) as SyncOptions), file, args, opts);
}

/**
 * Starts `file` in its own session (setsid), detached from hardwire: it outlives the command that
 * started it (a lab host's systemd-nspawn). stdout and stderr go to the file `output`, truncated first.
 * Resolves with its PID once it runs; a program that cannot start is a ProcError, as in run().
 */
export async function spawnDetached(
  file: string,
  args: readonly string[],
  opts: Pick<RunOptions, 'step' | 'host' | 'hint' | 'cwd'> & { output: string },
): Promise<number> {
  const { execa } = await import('execa');
  // A descriptor of its own, not execa's { file }, which pipes through this process and would stop when it exits.
  const out = openSync(opts.output, 'w', 0o644);
  try {
    // execa's types name descriptors 3-9 only; any open one goes to spawn as it is.
    const fd = out as 3;
    const child = execa(file, args, {
      cwd: opts.cwd,
      detached: true,
      cleanup: false,
      reject: false,
      stdin: 'ignore',
      stdout: fd,
      stderr: fd,
    });
    // It runs ('spawn'), or it could not start: then execa's result says why.
    const outcome = await Promise.race([
      once(child.nodeChildProcess, 'spawn').then(
        () => 'running' as const,
        () => child,
      ),
      child,
    ]);
    if (outcome !== 'running' || child.pid === undefined)
      throw failure(outcome === 'running' ? await child : outcome, file, args, opts);
    child.nodeChildProcess.unref();
    return child.pid;
  } finally {
    closeSync(out);
  }
}

/** A finished execa result as RunResult; throws the ProcError that says why the program failed. */
function settle(
  r: Result | SyncResult,
  file: string,
  args: readonly string[],
  opts: RunOptions,
): RunResult {
  if (r.exitCode === 0 || (opts.allowFail && typeof r.exitCode === 'number'))
    return { code: r.exitCode, stdout: text(r.stdout), stderr: text(r.stderr) };
  throw failure(r, file, args, opts);
}

function text(out: unknown): string {
  return typeof out === 'string' ? out : '';
}

/** Why a program failed: it never started, timed out, printed too much, was killed, or exited non-zero. */
function failure(
  r: Result | SyncResult,
  file: string,
  args: readonly string[],
  opts: RunOptions,
): ProcError {
  const argv = [file, ...args];
  const stdout = text(r.stdout);
  const stderr = text(r.stderr);
  const n = opts.tailLines ?? 20;
  const detail =
    opts.tailOf === 'all'
      ? tail(typeof r.all === 'string' ? r.all : '', n)
      : tail(stderr, n).length > 0
        ? tail(stderr, n)
        : tail(stdout, n);
  const what = opts.label ?? shJoin(argv);
  const common = {
    argv,
    stdout,
    stderr,
    detail,
    cause: r,
    ...(opts.host ? { host: opts.host } : {}),
  };
  if (r.exitCode === undefined && !r.timedOut && !r.signal && !r.isMaxBuffer) {
    // Never started: the program (or the cwd) is missing, or not executable.
    const errno = r.code ?? 'unknown error';
    const why = opts.cwd && !existsSync(opts.cwd) ? `${errno} (no directory ${opts.cwd})` : errno;
    return new ProcError(
      opts.step,
      `cannot run ${file}: ${why}${opts.hint ? `; ${opts.hint}` : ''}`,
      { ...common, failure: 'spawn', errno: r.code, detail: [] },
    );
  }
  if (r.timedOut) {
    return new ProcError(opts.step, `${what} timed out after ${opts.timeoutMs} ms (killed)`, {
      ...common,
      failure: 'timeout',
      signal: r.signal,
    });
  }
  if (r.isMaxBuffer) {
    return new ProcError(opts.step, `${what} printed more output than hardwire keeps (killed)`, {
      ...common,
      failure: 'output',
      signal: r.signal,
    });
  }
  if (r.signal) {
    return new ProcError(opts.step, `${what} was killed by ${r.signal}`, {
      ...common,
      failure: 'signal',
      signal: r.signal,
    });
  }
  return new ProcError(opts.step, `${what} failed (exit ${r.exitCode})`, {
    ...common,
    failure: 'exit',
    exitStatus: r.exitCode,
  });
}
