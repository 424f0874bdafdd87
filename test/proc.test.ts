// lib/proc.ts against real processes: how each kind of failure surfaces, and the features callers use.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exitCodeOf, StepError } from '../lib/errors.ts';
import { ProcError, run } from '../lib/proc.ts';

async function failure(p: Promise<unknown>): Promise<ProcError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ProcError);
  return err as ProcError;
}

describe('lib/proc run', () => {
  it('a missing program is "cannot run X: ENOENT" with the caller\'s hint, a StepError with exit code 1', async () => {
    const err = await failure(run('hardwire-no-such-program', ['--version'], { step: 'probe', host: 'node1', hint: 'install it with: apt-get install -y nothing' }));
    expect(err).toBeInstanceOf(StepError);
    expect(err.message).toBe('cannot run hardwire-no-such-program: ENOENT; install it with: apt-get install -y nothing');
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
    const err = await failure(run('sh', ['-c', 'echo one; echo two >&2; sleep 0.2; echo three; exit 1'], { step: 's', label: 'the tool', tailOf: 'all', tailLines: 2 }));
    expect(err.message).toBe('the tool failed (exit 1)');
    expect(err.command).toBe("sh -c 'echo one; echo two >&2; sleep 0.2; echo three; exit 1'");
    expect(err.detail).toEqual(['two', 'three']);
    // Without tailOf, stdout stands in when stderr is empty.
    const quiet = await failure(run('sh', ['-c', 'echo only-stdout; exit 1'], { step: 's' }));
    expect(quiet.detail).toEqual(['only-stdout']);
  });

  it('allowFail returns the exit code instead of throwing', async () => {
    const r = await run('sh', ['-c', 'echo out; echo err >&2; exit 7'], { step: 's', allowFail: true });
    expect(r).toEqual({ code: 7, stdout: 'out\n', stderr: 'err\n' });
    expect((await run('true', [], { step: 's', allowFail: true })).code).toBe(0);
  });

  it('passes argv without a shell, and env replaces the environment', async () => {
    const odd = '$(echo no); *; `id` \'"';
    expect((await run('printf', ['%s', odd], { step: 's' })).stdout).toBe(odd);
    const env = await run('sh', ['-c', 'echo "$HW_A:${HOME-unset}"'], { step: 's', env: { HW_A: 'a', PATH: process.env.PATH } });
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
    const seen: { line: string; at: number }[] = [];
    const t0 = Date.now();
    const r = await run('sh', ['-c', 'echo first >&2; sleep 0.5; echo out; printf "second\\nthird" >&2'], {
      step: 's',
      onStderrLine: (line) => seen.push({ line, at: Date.now() - t0 }),
    });
    const done = Date.now() - t0;
    expect(seen.map((s) => s.line)).toEqual(['first', 'second', 'third']);
    expect(done - seen[0]!.at).toBeGreaterThanOrEqual(400); // delivered before the program ended
    expect(r.stdout).toBe('out\n');
    expect(r.stderr).toContain('first\nsecond\nthird');
    const out: string[] = [];
    await run('sh', ['-c', 'echo a; echo b'], { step: 's', onStdoutLine: (l) => out.push(l) });
    expect(out).toEqual(['a', 'b']);
  });

  it('a timeout kills the program and throws, even with allowFail', async () => {
    const t0 = Date.now();
    const err = await failure(run('sh', ['-c', 'echo $$ >&2; exec sleep 30'], { step: 'slow', timeoutMs: 300, allowFail: true }));
    expect(Date.now() - t0).toBeLessThan(5000);
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
