// lib/lock.ts: a held lock waits or fails naming its owner; a dead owner's lock, or one whose PID now
// belongs to another process, is taken over at once.
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { withLock } from '../lib/lock.ts';
import { procStartTime } from '../lib/pid.ts';
import { StepError } from '../lib/errors.ts';
import { tempDir } from './helpers/tmp.ts';

const me = () => `${process.pid} ${procStartTime(process.pid)}`;

describe('lib/lock', () => {
  it('a reused PID does not hold the lock: same PID, another start time, taken over at once', async () => {
    const file = join(tempDir('hardwire-lock-'), 'lab.lock');
    // Our own PID is alive, as a reused PID would be, but the start time is not ours: the recorded owner is gone.
    writeFileSync(file, `${process.pid} 1`);
    const t0 = Date.now();
    let inside = '';
    await withLock(
      file,
      'the lab',
      60_000,
      async () => {
        inside = readFileSync(file, 'utf8');
      },
      {
        onWait: () => {
          throw new Error('waited for a reused PID');
        },
      },
    );
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(inside).toBe(me());
    expect(existsSync(file)).toBe(false);
  });

  it('a live owner holds it: waits, then fails naming the owner; a dead one is taken over', async () => {
    const dir = tempDir('hardwire-lock-');
    const file = join(dir, 'lab.lock');
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    await new Promise((r) => child.once('spawn', r));
    const pid = child.pid!;
    writeFileSync(file, `${pid} ${procStartTime(pid)}`);
    let waits = 0;
    const err = await withLock(file, 'the lab', 600, async () => 'taken', {
      onWait: () => waits++,
      pollMs: 50,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StepError);
    expect((err as Error).message).toBe(`the lab is busy: process ${pid} holds ${file}`);
    expect(waits).toBe(1);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(await withLock(file, 'the lab', 5000, async () => 'taken')).toBe('taken');
    expect(readdirSync(dir)).toEqual([]); // no temp or stale files left
  });

  it('one holder at a time among concurrent takers', async () => {
    const file = join(tempDir('hardwire-lock-'), 'x.lock');
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 5 }, () =>
        withLock(
          file,
          'x',
          10_000,
          async () => {
            most = Math.max(most, ++inside);
            await new Promise((r) => setTimeout(r, 20));
            inside--;
          },
          { pollMs: 10 },
        ),
      ),
    );
    expect(most).toBe(1);
  });
});
