// Dispatches `hardwire <command> ...`. Each command lives in cli/commands/<name>.ts and is declared
// with commander (cli/command.ts); only the module of the command that runs is imported.
import { exitCodeOf, InputError, StepError } from '../lib/errors.ts';
import { rootCli, runCli, type Cli } from './command.ts';
import { declareAll, declareCommand } from './registry.ts';

function usage(list: Cli[]): string {
  const width = Math.max(...list.map((c) => c.name().length));
  return [
    'usage: hardwire <command> [options]   (every command takes --help)',
    '',
    ...list.map((c) => `  ${c.name().padEnd(width)}  ${c.summary()}`),
  ].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${usage(await declareAll(rootCli()))}\n`);
    return name ? 0 : 2;
  }
  try {
    const root = rootCli();
    if (!(await declareCommand(root, name)))
      throw new InputError(
        'command',
        `unknown command "${name}"; run "hardwire --help" for the list`,
      );
    return await runCli(root, argv);
  } catch (err) {
    if (err instanceof InputError) {
      process.stderr.write(`error: ${err.message}\n`);
      for (const line of err.detail) process.stderr.write(`  | ${line}\n`);
    } else if (err instanceof StepError) {
      const where = err.host ? `[${err.host}] ` : '';
      process.stderr.write(`error: ${where}${err.step}: ${err.message}\n`);
      for (const line of err.detail) process.stderr.write(`  | ${line}\n`);
    } else {
      process.stderr.write(
        `error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
    }
    return exitCodeOf(err);
  }
}
