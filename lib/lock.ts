// The one cross-process lock (the lab, the base rootfs build, each binary group in the cache): a file
// holding the owner's PID and start time. A lock whose owner has exited, or whose PID now belongs to
// another process (same PID, other start time), is stale and taken over, so a crash never blocks the
// next run and a reused PID never keeps a dead owner's lock.
import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { StepError } from './errors.ts';
import { isSameProcess, procStartTime } from './pid.ts';

export interface LockOptions {
  /** Called once, the first time the lock is found held (to say what we wait for). */
  onWait?: () => void;
  /** How often a held lock is looked at again. */
  pollMs?: number;
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** "PID STARTTIME" of a live owner, or undefined when the text names no live process. */
function liveOwner(text: string): string | undefined {
  const [pid, start] = text.trim().split(' ');
  return isSameProcess(Number(pid), start) ? pid : undefined;
}

/** Takes the lock if it is free: the owner line is written first and linked into place, so the lock file is never seen empty. */
function tryTake(file: string, me: string): boolean {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(tmp, me, { mode: 0o600 });
  try {
    linkSync(tmp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
}

/**
 * Removes a stale lock whose text was `seen`. It is moved aside first and checked: if another
 * process took the lock in between, the moved file is its live lock, and is put back.
 */
function removeStale(file: string, seen: string): void {
  const aside = `${file}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    renameSync(file, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if (read(aside) !== seen) {
    try {
      linkSync(aside, file);
    } catch {
      /* a third process holds it now; the moved owner will find out when it releases */
    }
  }
  rmSync(aside, { force: true });
}

/** Runs `fn` holding the lock `file`; waits for a live owner up to `timeoutMs`, then fails naming it. */
export async function withLock<T>(
  file: string,
  what: string,
  timeoutMs: number,
  fn: () => Promise<T>,
  opts: LockOptions = {},
): Promise<T> {
  mkdirSync(dirname(file), { recursive: true });
  const me = `${process.pid} ${procStartTime(process.pid) ?? ''}`;
  const deadline = Date.now() + timeoutMs;
  let waited = false;
  while (!tryTake(file, me)) {
    const text = read(file);
    if (text === undefined) continue; // released meanwhile
    const owner = liveOwner(text);
    if (owner === undefined) {
      removeStale(file, text);
      continue;
    }
    if (Date.now() > deadline)
      throw new StepError('lock', `${what} is busy: process ${owner} holds ${file}`);
    if (!waited) {
      opts.onWait?.();
      waited = true;
    }
    await sleep(opts.pollMs ?? 200);
  }
  try {
    return await fn();
  } finally {
    // Only our own lock: had it been taken over (never, while we live), the file is another's.
    if (read(file) === me) rmSync(file, { force: true });
  }
}
