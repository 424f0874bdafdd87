// A lock file holding the owner's PID and start time, so a crashed owner never blocks the next run.
import { mkdirSync, openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';
import { dirname } from 'node:path';
import { StepError } from '../lib/errors.ts';
import { isSameProcess, procStartTime, sleep } from './sys.ts';

export async function withLock<T>(file: string, what: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  mkdirSync(dirname(file), { recursive: true });
  const me = `${process.pid} ${procStartTime(process.pid) ?? ''}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, me);
      closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let owner = '';
      try { owner = readFileSync(file, 'utf8'); } catch { continue; }
      const [pid, start] = owner.split(' ');
      if (!isSameProcess(Number(pid), start)) {
        rmSync(file, { force: true }); // owner is gone
        continue;
      }
      if (Date.now() > deadline) throw new StepError('lab-lock', `${what} is busy: process ${pid} holds ${file}`);
      await sleep(200);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(file, { force: true });
  }
}
