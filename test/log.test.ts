// The progress display, replayed through a small terminal model: what a user sees at the end.
import { describe, expect, it } from 'vitest';
import { stderrLogger, type LogStream } from '../lib/log.ts';

/** Applies the control sequences the logger uses (\r, \n, CSI n A, CSI J) to a screen of lines. */
class Screen implements LogStream {
  readonly isTTY = true;
  readonly columns = 60;
  lines: string[] = [''];
  row = 0;
  raw = '';
  write(s: string): boolean {
    this.raw += s;
    // eslint-disable-next-line no-control-regex
    const plain = s.replace(/\x1b\[[0-9;]*m/g, '');
    for (let i = 0; i < plain.length; i++) {
      const ch = plain[i]!;
      if (ch === '\x1b') {
        // eslint-disable-next-line no-control-regex
        const m = /^\x1b\[(\d*)([AJ])/.exec(plain.slice(i))!;
        if (m[2] === 'A') this.row = Math.max(0, this.row - Number(m[1] || 1));
        else (this.lines.length = this.row + 1), (this.lines[this.row] = '');
        i += m[0].length - 1;
      } else if (ch === '\r') {
        this.lines[this.row] = '';
      } else if (ch === '\n') {
        this.row++;
        if (this.lines.length <= this.row) this.lines.push('');
      } else {
        this.lines[this.row] += ch;
        if (this.lines[this.row]!.length > this.columns)
          throw new Error(`line wrapped: ${this.lines[this.row]}`);
      }
    }
    return true;
  }
  text(): string[] {
    return this.lines.slice(0, this.row);
  }
}

describe('progress display', () => {
  it('on a terminal, per-host events update one line per host and settle into a summary', () => {
    const screen = new Screen();
    const log = stderrLogger(false, true, screen);
    log.step('Push files');
    for (let i = 1; i <= 40; i++) {
      log.host!('node1', `write /etc/kubernetes/pki/file-${i}.crt (missing)`);
      log.host!('node2', `write /etc/kubernetes/pki/file-${i}.crt (missing)`);
      if (i === 20) log.info('  a note in the middle');
    }
    // While running: the first 20 events per host settled before the note (time order), then
    // exactly one live line per host, cut to the terminal width.
    expect(screen.text()).toEqual([
      '==> Push files',
      '  [node1] 20 changes, last: write /etc/kubernetes/pki/file…',
      '  [node2] 20 changes, last: write /etc/kubernetes/pki/file…',
      '  a note in the middle',
      '  [node1] 20 · write /etc/kubernetes/pki/file-40.crt (miss…',
      '  [node2] 20 · write /etc/kubernetes/pki/file-40.crt (miss…',
    ]);
    log.step('Start etcd');
    const t = screen.text();
    expect(t.slice(0, 6)).toEqual([
      '==> Push files',
      '  [node1] 20 changes, last: write /etc/kubernetes/pki/file…',
      '  [node2] 20 changes, last: write /etc/kubernetes/pki/file…',
      '  a note in the middle',
      '  [node1] 20 changes, last: write /etc/kubernetes/pki/file…',
      '  [node2] 20 changes, last: write /etc/kubernetes/pki/file…',
    ]);
    expect(t[6]).toMatch(/^✔ Push files \(\d+\.\d s\)$/);
    expect(t[7]).toBe('==> Start etcd');
  });

  it('without a terminal (or under --json), every event is its own plain line', () => {
    const lines: string[] = [];
    const out: LogStream = { write: (s: string) => lines.push(s), isTTY: false };
    const log = stderrLogger(false, false, out);
    log.step('Push files');
    log.host!('node1', 'write /a');
    log.host!('node1', 'write /b');
    log.info('  done');
    expect(lines.join('')).toBe('==> Push files\n  [node1] write /a\n  [node1] write /b\n  done\n');
  });
});
