// The one gate every host change passes through. In dry-run it records the intent and skips the
// write, so a dry run cannot miss a change: code that bypasses Wet has no session to write with.
import type { Logger } from '../lib/log.ts';

export interface Intent { host: string; msg: string }

export class Wet {
  readonly dryRun: boolean;
  readonly intents: Intent[] = [];
  readonly #log: Logger;

  constructor(dryRun: boolean, log: Logger) {
    this.dryRun = dryRun;
    this.#log = log;
  }

  async run<T>(host: string, msg: string, fn: () => Promise<T>): Promise<T | undefined> {
    this.intents.push({ host, msg });
    if (this.dryRun) return undefined;
    if (this.#log.host) this.#log.host(host, msg);
    else this.#log.info(`  [${host}] ${msg}`);
    return fn();
  }
}
