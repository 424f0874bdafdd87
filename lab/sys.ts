// Local process helpers for the lab: argv-only command execution and PID liveness that survives PID reuse.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { StepError } from '../lib/errors.ts';
import { shJoin } from '../transport/quote.ts';

export interface RunResult { code: number; stdout: string; stderr: string }

/** Runs a local command without a shell. Non-zero exit → StepError unless allowFail. */
export function run(cmd: string, args: string[], opts: { step: string; host?: string; allowFail?: boolean; timeoutMs?: number } = { step: 'run' }): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: opts.timeoutMs ?? 0 }, (err, stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { code?: number | string }) | null;
      if (e && typeof e.code === 'string') {
        return reject(new StepError(opts.step, `cannot run ${cmd}: ${e.code}`, { ...(opts.host ? { host: opts.host } : {}), cause: e }));
      }
      const code = e ? (typeof e.code === 'number' ? e.code : -1) : 0;
      if (code !== 0 && !opts.allowFail) {
        const detail = stderr.trimEnd().split('\n').filter(Boolean).slice(-10);
        return reject(new StepError(opts.step, `${shJoin([cmd, ...args])} failed (exit ${code})`, { ...(opts.host ? { host: opts.host } : {}), detail }));
      }
      resolve({ code, stdout, stderr });
    });
  });
}

/** Start time of a process in clock ticks since boot (field 22 of /proc/<pid>/stat), or undefined if gone. */
export function procStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm (field 2) may contain spaces and parens: split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined; // exited, not yet reaped
    return fields[19];
  } catch {
    return undefined;
  }
}

/** True only for the very process we recorded: same PID and same start time. */
export function isSameProcess(pid: number | null | undefined, startTime: string | null | undefined): boolean {
  return typeof pid === 'number' && pid > 0 && typeof startTime === 'string' && procStartTime(pid) === startTime;
}

export function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls until `pred` holds or the deadline passes; returns whether it held. */
export async function waitFor(pred: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 50): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await pred()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(everyMs);
  }
}

/** Direct children of a process, from /proc/<pid>/task/<tid>/children. */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** PID (in our namespace) of a descendant that is PID 1 of its own PID namespace: the container's init. */
export function findContainerInit(pid: number): number | undefined {
  const queue = [...childrenOf(pid)];
  while (queue.length > 0) {
    const p = queue.shift()!;
    try {
      const nspid = /^NSpid:\s+(.*)$/m.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1]?.trim().split(/\s+/);
      if (nspid && nspid.length > 1 && nspid[nspid.length - 1] === '1') return p;
    } catch {
      continue;
    }
    queue.push(...childrenOf(p));
  }
  return undefined;
}
