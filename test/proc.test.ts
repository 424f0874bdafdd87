// lib/proc.ts against real processes: how each kind of failure surfaces, and the features callers use.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exitCodeOf, StepError } from '../lib/errors.ts';
import { ProcError, run } from '../lib/proc.ts';
import { tempDir } from './helpers/tmp.ts';

async function failure(p: Promise<unknown>): Promise<ProcError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProcError);
  return err as ProcError;
}

describe('lib/proc run', () => {
  it('a missing program is "cannot run X: ENOENT" with the caller\'s hint, a StepError with exit code 1', async () => {
    const err = await failure(
      run('hardwire-no-such-program', ['--version'], {
        step: 'probe',
        host: 'node1',
        hint: 'install it with: apt-get install -y nothing',
      }),
    );
    expect(err).toBeInstanceOf(StepError);
    expect(err.message).toBe(
      'cannot run hardwire-no-such-program: ENOENT; install it with: apt-get install -y nothing',
    );
    expect(err.failure).toBe('spawn');
    expect(err.errno).toBe('ENOENT');
    expect(err.exitStatus).toBeUndefined();
    expect(err.step).toBe('probe');
    expect(err.host).toBe('node1');
    expect(err.command).toBe('hardwire-no-such-program --version');
    expect(exitCodeOf(err)).toBe(1);
  });

  it('a missing working directory is named', async () => {
    const err = await failure(run('true', [], { step: 'cwd', cwd: '/nonexistent/hardwire-test' }));
    expect(err.message).toBe('cannot run true: ENOENT (no directory /nonexistent/hardwire-test)');
  });

  it('a non-zero exit is a StepError with the quoted command, the exit status and the stderr tail', async () => {
    const script = 'for i in $(seq 1 30); do echo "err $i" >&2; done; echo out; exit 3';
    const err = await failure(run('sh', ['-c', script], { step: 'thing', host: 'node2' }));
    expect(err.failure).toBe('exit');
    expect(err.exitStatus).toBe(3);
    expect(err.argv).toEqual(['sh', '-c', script]);
    expect(err.command).toBe(`sh -c '${script}'`);
    expect(err.message).toBe(`sh -c '${script}' failed (exit 3)`);
    expect(err.detail).toEqual(Array.from({ length: 20 }, (_, i) => `err ${i + 11}`));
    expect(err.stdout).toBe('out\n');
    expect([err.step, err.host]).toEqual(['thing', 'node2']);
    expect(exitCodeOf(err)).toBe(1);
  });

  it('label replaces the command in the message only; tailOf all interleaves stdout (in arrival order); tailLines trims', async () => {
    const err = await failure(
      run('sh', ['-c', 'echo one; echo two >&2; sleep 0.2; echo three; exit 1'], {
        step: 's',
        label: 'the tool',
        tailOf: 'all',
        tailLines: 2,
      }),
    );
    expect(err.message).toBe('the tool failed (exit 1)');
    expect(err.command).toBe("sh -c 'echo one; echo two >&2; sleep 0.2; echo three; exit 1'");
    expect(err.detail).toEqual(['two', 'three']);
    // Without tailOf, stdout stands in when stderr is empty.
    const quiet = await failure(run('sh', ['-c', 'echo only-stdout; exit 1'], { step: 's' }));
    expect(quiet.detail).toEqual(['only-stdout']);
  });

  it('allowFail returns the exit code instead of throwing', async () => {
    const r = await run('sh', ['-c', 'echo out; echo err >&2; exit 7'], {
      step: 's',
      allowFail: true,
    });
    expect(r).toEqual({ code: 7, stdout: 'out\n', stderr: 'err\n' });
    expect((await run('true', [], { step: 's', allowFail: true })).code).toBe(0);
  });

  it('passes argv without a shell, and env replaces the environment', async () => {
    const odd = '$(echo no); *; `id` \'"';
    expect((await run('printf', ['%s', odd], { step: 's' })).stdout).toBe(odd);
    const env = await run('sh', ['-c', 'echo "$HW_A:${HOME-unset}"'], {
      step: 's',
      env: { HW_A: 'a', PATH: process.env.PATH },
    });
    expect(env.stdout).toBe('a:unset\n');
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'hardwire-proc-')));
    try {
      expect((await run('pwd', [], { step: 's', cwd: dir })).stdout).toBe(`${dir}\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect((await run('cat', [], { step: 's', input: 'fed\n' })).stdout).toBe('fed\n');
    // Without input, stdin is empty rather than an open pipe: cat ends at once.
    expect((await run('cat', [], { step: 's', timeoutMs: 5000 })).stdout).toBe('');
  });

  it('the stderr line callback sees each line as it comes, the last one without a newline too', async () => {
    // Causality, not timing: after its first line the program waits (up to 30 s) for a file that only
    // the callback creates, and says whether it appeared. A callback run only after the program ended
    // would leave it waiting out the 30 s and printing "not seen".
    const flag = join(tempDir(), 'seen-first');
    const seen: string[] = [];
    const r = await run(
      'sh',
      [
        '-c',
        `echo first >&2; i=0; while [ ! -e "$0" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
      if [ -e "$0" ]; then echo seen; else echo 'not seen'; fi; printf "second\\nthird" >&2`,
        flag,
      ],
      {
        step: 's',
        onStderrLine: (line) => {
          seen.push(line);
          if (line === 'first') writeFileSync(flag, '');
        },
      },
    );
    expect(seen).toEqual(['first', 'second', 'third']);
    expect(r.stdout, 'the program saw the callback act on its first line while it still ran').toBe(
      'seen\n',
    );
    expect(r.stderr).toContain('first\nsecond\nthird');
    const out: string[] = [];
    await run('sh', ['-c', 'echo a; echo b'], { step: 's', onStdoutLine: (l) => out.push(l) });
    expect(out).toEqual(['a', 'b']);
  }, 60_000);

  it('a timeout kills the program and throws, even with allowFail', async () => {
    const t0 = Date.now();
    const err = await failure(
      run('sh', ['-c', 'echo $$ >&2; exec sleep 30'], {
        step: 'slow',
        timeoutMs: 300,
        allowFail: true,
      }),
    );
    // Generous: the program would sleep 30 s; spawning sh and killing it on a loaded 2-core machine has
    // taken seconds, so any bound well under 30 s proves the kill without timing the machine.
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(err.failure).toBe('timeout');
    expect(err.signal).toBe('SIGTERM');
    expect(err.message).toBe("sh -c 'echo $$ >&2; exec sleep 30' timed out after 300 ms (killed)");
    const pid = Number(err.stderr.trim());
    expect(pid).toBeGreaterThan(0);
    expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
  });

  it('a program killed by a signal throws with the signal', async () => {
    const err = await failure(run('sh', ['-c', 'kill -KILL $$'], { step: 's', allowFail: true }));
    expect(err.failure).toBe('signal');
    expect(err.signal).toBe('SIGKILL');
    expect(err.message).toBe("sh -c 'kill -KILL $$' was killed by SIGKILL");
  });
});
