// lib/proc.ts's other ways to run a program: synchronous, on hardwire's own stdio, and detached.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProcError, run, runSync, spawnDetached } from '../lib/proc.ts';
import { isSameProcess, procStartTime } from '../lib/pid.ts';
import { waitFor } from '../lib/retry.ts';
import { tempDir } from './helpers/tmp.ts';

describe('lib/proc runSync, inherit, spawnDetached', () => {
  it('runSync returns the output and fails as run() does', () => {
    expect(runSync('sh', ['-c', 'echo out; echo err >&2'], { step: 's' })).toEqual({
      code: 0,
      stdout: 'out\n',
      stderr: 'err\n',
    });
    expect(() =>
      runSync('sh', ['-c', 'echo bad >&2; exit 4'], { step: 's', label: 'the tool' }),
    ).toThrow(expect.objectContaining({ message: 'the tool failed (exit 4)', detail: ['bad'] }));
    expect(() =>
      runSync('hardwire-no-such-program', [], { step: 's', hint: 'install it' }),
    ).toThrow('cannot run hardwire-no-such-program: ENOENT; install it');
  });

  it('inherit hands over stdio: nothing is kept, the exit code still counts', async () => {
    const r = await run('sh', ['-c', 'echo shown-not-kept; exit 3'], {
      step: 's',
      inherit: true,
      allowFail: true,
    });
    expect(r).toEqual({ code: 3, stdout: '', stderr: '' });
  });

  it('spawnDetached starts its own session, writes to the file, and outlives the parent', async () => {
    const dir = tempDir('hardwire-proc-');
    const out = join(dir, 'out.log');
    // The parent is a node that exits right after the spawn; the child must live on.
    const script = `import { spawnDetached } from ${JSON.stringify(join(import.meta.dirname, '..', 'lib', 'proc.ts'))};
      process.stdout.write(String(await spawnDetached('sh', ['-c', 'echo up; exec sleep 30'], { step: 's', output: ${JSON.stringify(out)} })));`;
    const t0 = Date.now();
    const pid = Number(
      (
        await run(process.execPath, ['--input-type=module', '-e', script], {
          step: 'parent',
          timeoutMs: 20_000,
        })
      ).stdout,
    );
    expect(Date.now() - t0).toBeLessThan(15_000); // the parent did not wait for sleep 30
    const started = procStartTime(pid);
    expect(isSameProcess(pid, started)).toBe(true);
    // setsid: the child leads its own session (field 6 of /proc/PID/stat is the session id).
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    expect(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]).toBe(String(pid));
    expect(await waitFor(() => readFileSync(out, 'utf8') === 'up\n', 5000)).toBe(true);
    process.kill(pid, 'SIGKILL');
    await expect(
      spawnDetached('hardwire-no-such-program', [], {
        step: 'boot',
        output: join(dir, 'x.log'),
        hint: 'install it',
      }),
    ).rejects.toThrow(ProcError);
  });
});
