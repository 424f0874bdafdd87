// A drill's timeline: the host changes, read from Wet's intents (each stamped when it was asked
// for), and what the drill itself observed, in time order.
import type { Intent } from '../../core/apply/wet.ts';
import type { Logger } from '../../lib/log.ts';

export interface TimelineEntry {
  at: string;
  event: string;
}

/** The changes a Wet recorded, as `[host] msg`. */
export function changes(intents: readonly Intent[]): TimelineEntry[] {
  return intents.map((i) => ({ at: new Date(i.at).toISOString(), event: `[${i.host}] ${i.msg}` }));
}

export class Timeline {
  readonly #marks: TimelineEntry[] = [];
  readonly #log: Logger;

  constructor(log: Logger) {
    this.#log = log;
  }

  /** Something the drill saw (not a host change): logged and kept. */
  mark(event: string): void {
    this.#marks.push({ at: new Date().toISOString(), event });
    this.#log.info(`  ${event}`);
  }

  /** The marks and the changes of each Wet given, in time order. */
  entries(...wets: { intents: readonly Intent[] }[]): TimelineEntry[] {
    return [...this.#marks, ...wets.flatMap((w) => changes(w.intents))].sort((a, b) =>
      a.at.localeCompare(b.at),
    );
  }
}
