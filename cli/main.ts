// Dispatches `hardwire <command> ...`. Each command lives in cli/commands/<name>.ts.
import type { Command } from './command.ts';
import { stderrLogger } from '../lib/log.ts';
import { exitCodeOf, InputError, StepError } from '../lib/errors.ts';
import { command, commands } from './registry.ts';

function usage(list: Command[]): string {
  const width = Math.max(...list.map((c) => c.name.length));
  return [
    'usage: hardwire <command> [options]   (every command takes --help)',
    '',
    ...list.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
  ].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${usage(await commands())}\n`);
    return name ? 0 : 2;
  }
  const cmd = await command(name);
  const log = stderrLogger(rest.includes('--quiet'), process.stderr.isTTY === true && !rest.includes('--json'));
  try {
    if (!cmd) throw new InputError('command', `unknown command "${name}"; run "hardwire --help" for the list`);
    if (rest.includes('--help') || rest.includes('-h')) {
      process.stdout.write(`${cmd.help.trim()}\n`);
      return 0;
    }
    return await cmd.run({ argv: rest, log });
  } catch (err) {
    if (err instanceof InputError) {
      process.stderr.write(`error: ${err.message}\n`);
    } else if (err instanceof StepError) {
      const where = err.host ? `[${err.host}] ` : '';
      process.stderr.write(`error: ${where}${err.step}: ${err.message}\n`);
      for (const line of err.detail) process.stderr.write(`  | ${line}\n`);
    } else {
      process.stderr.write(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    }
    return exitCodeOf(err);
  }
}
