// Logs go to stderr so that stdout stays one clean JSON document under --json.
import { styleText } from 'node:util';

export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
  step(msg: string): void;
}

export function stderrLogger(quiet = false): Logger {
  const tty = process.stderr.isTTY === true;
  const paint = (s: Parameters<typeof styleText>[0], m: string) => (tty ? styleText(s, m) : m);
  return {
    info: (m) => { if (!quiet) process.stderr.write(`${m}\n`); },
    warn: (m) => process.stderr.write(`${paint('yellow', 'warning:')} ${m}\n`),
    step: (m) => { if (!quiet) process.stderr.write(`${paint('cyan', '==>')} ${m}\n`); },
  };
}

export function printJson(doc: unknown): void {
  process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
}
