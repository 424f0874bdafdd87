// Logs go to stderr so that stdout stays one clean JSON document under --json.
// On a terminal (and not under --json) steps are shown as progress: each finished step gets a
// check mark and its duration; otherwise plain lines, one per event.
import { styleText } from 'node:util';

export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
  step(msg: string): void;
}

export function stderrLogger(quiet = false, progress = process.stderr.isTTY === true): Logger {
  const tty = process.stderr.isTTY === true;
  const paint = (s: Parameters<typeof styleText>[0], m: string) => (tty ? styleText(s, m) : m);
  let open: { title: string; t0: number } | undefined;
  const close = () => {
    if (!open) return;
    process.stderr.write(`${paint('green', '✔')} ${open.title} ${paint('dim', `(${((performance.now() - open.t0) / 1000).toFixed(1)} s)`)}\n`);
    open = undefined;
  };
  if (progress) process.once('exit', (code) => { if (code === 0) close(); });
  return {
    info: (m) => { if (!quiet) process.stderr.write(`${m}\n`); },
    warn: (m) => process.stderr.write(`${paint('yellow', 'warning:')} ${m}\n`),
    step: (m) => {
      if (quiet) return;
      if (progress) {
        close();
        open = { title: m, t0: performance.now() };
      }
      process.stderr.write(`${paint('cyan', '==>')} ${m}\n`);
    },
  };
}

export function printJson(doc: unknown): void {
  process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
}
