// The shape every CLI command implements. Commands parse their own argv with node:util parseArgs.
import type { Logger } from '../lib/log.ts';

export interface CommandContext {
  argv: string[];
  log: Logger;
}

export interface Command {
  name: string;
  summary: string;
  /** Full --help text, first line is the usage. */
  help: string;
  run(ctx: CommandContext): Promise<number>;
}
