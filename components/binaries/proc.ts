// Runs a program with an argv array (never a shell string) and collects its output.
import { spawn } from 'node:child_process';

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** Called with each complete stderr line, e.g. to show build progress. */
  onStderrLine?: (line: string) => void;
}

export function run(file: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'], timeout: opts.timeoutMs });
    let stdout = '';
    let stderr = '';
    let partial = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d; });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      if (!opts.onStderrLine) return;
      partial += d;
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) opts.onStderrLine(l);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (partial && opts.onStderrLine) opts.onStderrLine(partial);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The last lines of some output, for StepError detail. */
export function tail(text: string, n = 20): string[] {
  return text.split('\n').map((l) => l.trimEnd()).filter((l) => l !== '').slice(-n);
}
