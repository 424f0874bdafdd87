// Logs go to stderr so that stdout stays one clean JSON document under --json.
// On a terminal (and not under --json) steps are shown as progress: each finished step gets a
// check mark and its duration, and per-host events of the running step update one live line per
// host instead of scrolling. Otherwise plain lines, one per event.
import { styleText } from 'node:util';

export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
  step(msg: string): void;
  /** An event on one host (a write, a restart). Loggers without it get `  [host] msg` as info. */
  host?(host: string, msg: string): void;
}

export interface LogStream {
  write(s: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

const ESC = '\x1b[';

export function stderrLogger(
  quiet = false,
  progress = process.stderr.isTTY === true,
  out: LogStream = process.stderr,
): Logger {
  const tty = out.isTTY === true;
  const paint = (s: Parameters<typeof styleText>[0], m: string) =>
    tty ? styleText(s, m, { validateStream: false }) : m;
  let emit = (t: string) => {
    out.write(t);
  };
  let open: { title: string; t0: number } | undefined;
  // The live region: one line per host, redrawn in place. Lines are cut to the terminal width,
  // because a wrapped line would break the cursor-up arithmetic.
  const hosts = new Map<string, { count: number; last: string }>();
  let drawn = 0;
  const width = () => Math.max(20, (out.columns ?? 80) - 1);
  const cut = (s: string) => (s.length > width() ? `${s.slice(0, width() - 1)}…` : s);
  const erase = () => {
    if (drawn > 0) emit(`${ESC}${drawn}A\r${ESC}J`);
    drawn = 0;
  };
  const draw = () => {
    erase();
    for (const [h, s] of hosts) emit(`${cut(`  [${h}] ${s.count} · ${s.last}`)}\n`);
    drawn = hosts.size;
  };
  const settle = () => {
    erase();
    for (const [h, s] of hosts)
      emit(`${cut(`  [${h}] ${s.count} change${s.count === 1 ? '' : 's'}, last: ${s.last}`)}\n`);
    hosts.clear();
  };
  // Another line ends the live region (settled as it stands), so the output stays in time order.
  const line = (s: string) => {
    settle();
    emit(`${s}\n`);
  };
  const close = () => {
    settle();
    if (!open) return;
    emit(
      `${paint('green', '✔')} ${open.title} ${paint('dim', `(${((performance.now() - open.t0) / 1000).toFixed(1)} s)`)}\n`,
    );
    open = undefined;
  };
  if (progress && out === process.stderr) {
    // Anything else written to the terminal (a result on stdout, an error) lands below the live
    // region: from then on the region is left as it stands and never erased over that text. The
    // logger's own output keeps the unwrapped write.
    const write = process.stderr.write.bind(process.stderr);
    emit = (t) => {
      write(t);
    };
    for (const stream of [process.stdout, process.stderr]) {
      const orig = stream.write.bind(stream) as (...a: unknown[]) => boolean;
      stream.write = ((...a: unknown[]) => {
        drawn = 0;
        return orig(...a);
      }) as typeof stream.write;
    }
    process.once('exit', (code) => {
      if (code === 0) close();
    });
  }
  return {
    info: (m) => {
      if (!quiet) progress ? line(m) : emit(`${m}\n`);
    },
    warn: (m) => {
      const w = `${paint('yellow', 'warning:')} ${m}`;
      if (progress) line(w);
      else emit(`${w}\n`);
    },
    step: (m) => {
      if (quiet) return;
      if (progress) close();
      if (progress) open = { title: m, t0: performance.now() };
      emit(`${paint('cyan', '==>')} ${m}\n`);
    },
    host: (h, m) => {
      if (quiet) return;
      if (!progress) {
        emit(`  [${h}] ${m}\n`);
        return;
      }
      const s = hosts.get(h) ?? { count: 0, last: '' };
      s.count++;
      s.last = m;
      hosts.set(h, s);
      draw();
    },
  };
}

export function printJson(doc: unknown): void {
  process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
}
