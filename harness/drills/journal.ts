// The first journal line of a unit that names a failure, read on the host, verbatim, with where
// and when it was logged: drills quote what a component said, never a summary of it.
import type { ReadSession } from '../../core/transport/index.ts';

export interface JournalLine {
  host: string;
  unit: string;
  at: string;
  line: string;
}

/** The first line of `unit` since `sinceMs` matching `pattern` (journalctl -g, so only matches travel). */
export async function firstJournalLine(
  s: ReadSession,
  host: string,
  unit: string,
  pattern: string,
  sinceMs: number,
): Promise<JournalLine | undefined> {
  return (await journalLines(s, host, unit, pattern, sinceMs))[0];
}

/** Every line of `unit` since `sinceMs` matching `pattern`, in the order logged. */
export async function journalLines(
  s: ReadSession,
  host: string,
  unit: string,
  pattern: string,
  sinceMs: number,
): Promise<JournalLine[]> {
  const r = await s.exec(
    [
      'journalctl',
      '-u',
      unit,
      `--since=@${Math.floor(sinceMs / 1000)}`,
      '-g',
      pattern,
      '-o',
      'json',
      '--output-fields=MESSAGE',
      '--no-pager',
    ],
    { allowFail: true, timeoutMs: 20_000 },
  );
  const out: JournalLine[] = [];
  for (const l of r.stdout.split('\n')) {
    if (!l.trim()) continue;
    let e: { __REALTIME_TIMESTAMP?: string; MESSAGE?: unknown };
    try {
      e = JSON.parse(l) as typeof e;
    } catch {
      continue;
    }
    const us = Number(e.__REALTIME_TIMESTAMP ?? 0);
    // --since has whole-second resolution.
    if (us / 1000 < sinceMs) continue;
    // journald hands a message that is not valid UTF-8 over as a byte array.
    const msg =
      typeof e.MESSAGE === 'string'
        ? e.MESSAGE
        : Array.isArray(e.MESSAGE)
          ? Buffer.from(e.MESSAGE as number[]).toString('utf8')
          : '';
    out.push({ host, unit, at: new Date(us / 1000).toISOString(), line: msg });
  }
  return out;
}

export interface JournalSource {
  host: string;
  session: ReadSession;
  unit: string;
}

/** The first match per host and unit, kept once found, so a drill can poll until it has enough. */
export class FirstLines {
  readonly #found = new Map<string, JournalLine>();
  readonly #pattern: string;
  readonly #sinceMs: number;

  constructor(pattern: string, sinceMs: number) {
    this.#pattern = pattern;
    this.#sinceMs = sinceMs;
  }

  /** Reads the sources that have no line yet; returns the lines found by this call. */
  async poll(sources: JournalSource[]): Promise<JournalLine[]> {
    const todo = sources.filter((x) => !this.#found.has(`${x.host}/${x.unit}`));
    const got = await Promise.all(
      todo.map((x) => firstJournalLine(x.session, x.host, x.unit, this.#pattern, this.#sinceMs)),
    );
    const fresh = got.filter((l) => l !== undefined);
    for (const l of fresh) this.#found.set(`${l.host}/${l.unit}`, l);
    return fresh;
  }

  get size(): number {
    return this.#found.size;
  }

  /** In the order they were logged. */
  lines(): JournalLine[] {
    return [...this.#found.values()].sort((a, b) => a.at.localeCompare(b.at));
  }
}
