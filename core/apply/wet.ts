// The one gate every host change passes through. It holds the only writable session of each host
// and hands it to the change's callback; in a dry run it records the intent and never calls the
// callback. Phases read hosts through read-only sessions (transport/read-only.ts), so a dry run
// cannot miss a change: there is no other way to write.
import type { Logger } from '../../lib/log.ts';
import type { Session } from '../transport/index.ts';
import { shJoin } from '../../lib/quote.ts';

export interface Intent {
  host: string;
  msg: string;
  /** When the change was asked for (ms since the epoch): drills build their timelines from it. */
  at: number;
}

export class Wet {
  readonly dryRun: boolean;
  readonly intents: Intent[] = [];
  readonly #log: Logger;
  readonly #writers = new Map<string, Session>();

  constructor(dryRun: boolean, log: Logger) {
    this.dryRun = dryRun;
    this.#log = log;
  }

  /** Connect hands each host's session here; nothing else keeps a writable one. */
  attach(host: string, s: Session): void {
    this.#writers.set(host, s);
  }

  async run<T>(host: string, msg: string, fn: (s: Session) => Promise<T>): Promise<T | undefined> {
    return this.runAll(host, [msg], fn);
  }

  /** Several changes made by one call (one tar stream): each is its own intent, in order. */
  async runAll<T>(
    host: string,
    msgs: string[],
    fn: (s: Session) => Promise<T>,
  ): Promise<T | undefined> {
    if (msgs.length === 0) return undefined;
    const at = Date.now();
    this.intents.push(...msgs.map((msg) => ({ host, msg, at })));
    if (this.dryRun) return undefined;
    const s = this.#writers.get(host);
    if (!s) throw new Error(`no SSH session for ${host}`);
    for (const msg of msgs) {
      if (this.#log.host) this.#log.host(host, msg);
      else this.#log.info(`  [${host}] ${msg}`);
    }
    return fn(s);
  }

  /** Several commands in one round trip (joined with &&), each still its own intent. */
  async runCommands(host: string, steps: { msg: string; argv: string[] }[]): Promise<void> {
    await this.runAll(
      host,
      steps.map((x) => x.msg),
      (s) => s.exec(['sh', '-c', steps.map((x) => shJoin(x.argv)).join(' && ')]),
    );
  }

  /** For connect's cleanup. */
  async closeAll(): Promise<void> {
    await Promise.all([...this.#writers.values()].map((s) => s.close()));
    this.#writers.clear();
  }
}
