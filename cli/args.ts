// Thin wrapper over node:util parseArgs: unknown flags become one-line InputErrors (exit 2).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { InputError } from '../lib/errors.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

export function parse<O extends Options>(argv: string[], options: O, allowPositionals = true) {
  try {
    const r = parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals, strict: true });
    return { values: r.values, positionals: r.positionals as string[] };
  } catch (err) {
    const msg = err instanceof Error ? err.message.split('\n')[0] ?? String(err) : String(err);
    throw new InputError('argv', `${msg} (see --help)`);
  }
}
