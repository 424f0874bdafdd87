// Every command is declared with one argument parser, commander, and used the same way:
//   - cli/commands/<name>.ts exports declare(root), which adds its command, subcommands,
//     options and arguments to the root; main.ts imports only the module of the command that
//     runs, so "hardwire pki" never loads ssh2 or the lab;
//   - --help prints the command's hand-written help text on stdout (first line: the usage);
//   - every parse error (unknown option, missing argument or option value, unknown or missing
//     subcommand, a bad number) becomes one InputError: one stderr line naming the field and
//     the fix, exit 2, never commander's own multi-line output or exit 1.
import { Command, CommanderError, type ErrorOptions } from 'commander';
import { InputError } from '../lib/errors.ts';
import { stderrLogger, type Logger } from '../lib/log.ts';

/** What cli/commands/<name>.ts exports. */
export interface CommandModule {
  /** Adds the command (with its subcommands) to root and returns it. */
  declare(root: Cli): Cli;
}

/** A commander Command whose parse errors are InputErrors and whose action's exit code is kept. */
export class Cli extends Command {
  /** The exit code the action returned (commander drops an action's return value). */
  result = 0;

  /**
   * Set by hostOptions (cli/common.ts) on every command that connects to an inventory's hosts:
   * gates is true when it also waits on gates. test/cli-grammar.test.ts reads it.
   */
  connects: { gates: boolean } | undefined;

  override createCommand(name?: string): Cli {
    return new Cli(name);
  }

  /** Commander reports every parse error through here: turn it into one InputError line. */
  override error(message: string, opts: ErrorOptions = {}): never {
    throw parseError(this, message, opts.code ?? 'commander.error');
  }
}

/** The root: only the command being run is declared on it (all of them for the command list). */
export function rootCli(): Cli {
  return new Cli('hardwire').exitOverride().configureOutput({
    writeOut: (s) => process.stdout.write(s),
    writeErr: (s) => process.stderr.write(s),
    outputError: () => {},
  });
}

/**
 * Declares a top-level command. Its help text serves the command and every subcommand declared
 * under it afterwards (commander copies the help configuration to subcommands as they are made).
 */
export function topCommand(
  root: Cli,
  name: string,
  summary: string,
  help: string | (() => string),
): Cli {
  // A function is called when help is shown, so it can list subcommands declared after this call.
  return root
    .command(name)
    .summary(summary)
    .configureHelp({ formatHelp: () => `${(typeof help === 'string' ? help : help()).trim()}\n` });
}

/** Parses argv (without "hardwire") and runs the action; returns its exit code, 0 after --help. */
export async function runCli(root: Cli, argv: string[]): Promise<number> {
  try {
    await root.parseAsync(argv, { from: 'user' });
    return root.result;
  } catch (err) {
    if (
      err instanceof CommanderError &&
      (err.code === 'commander.helpDisplayed' || err.code === 'commander.version')
    )
      return 0;
    if (err instanceof CommanderError)
      throw new InputError('argv', `${oneLine(err.message)} (see "hardwire --help")`);
    throw err;
  }
}

export interface Run<O> {
  /** This command's options merged with those of the commands above it. */
  opts: O;
  /** Progress on stderr: quiet under --quiet, plain lines under --json or without a terminal. */
  log: Logger;
  cmd: Cli;
}

/**
 * Wraps an action: fn gets the parsed options, a logger and the command's arguments as commander
 * declares them (a variadic argument is an array), and returns the exit code.
 */
export function act<O extends object, A extends unknown[]>(
  fn: (run: Run<O>, ...args: A) => Promise<number>,
) {
  return async function (this: Cli): Promise<void> {
    const opts = this.optsWithGlobals<O & { json?: unknown; quiet?: unknown }>();
    const log = stderrLogger(
      opts.quiet === true,
      process.stderr.isTTY === true && opts.json === undefined,
    );
    const code = await fn({ opts, log, cmd: this }, ...(this.processedArgs as A));
    rootOf(this).result = code;
  };
}

/**
 * Finishes a command whose subcommands do the work (lab, certs, etcd snapshot, ...): without a
 * subcommand, or with an unknown one, it is one line and exit 2 (commander would print its help
 * on stderr and exit 1). Call it after declaring the subcommands.
 */
export function group(cmd: Cli): Cli {
  return cmd
    .argument('[subcommand...]')
    .allowUnknownOption()
    .action(function (this: Cli) {
      const names = this.commands.map((c) => c.name());
      const first = this.args.find((a) => !a.startsWith('-'));
      const option = this.args.find((a) => a.startsWith('-'));
      // An option the group does not know, written before the subcommand.
      if (first && names.includes(first) && option) throw unknownOption(this, option);
      const what = first ? `unknown "${first}"` : 'missing';
      const use =
        names.length <= 3
          ? listOf(
              names.map((n) => `"${pathOf(this)} ${n}"`),
              'or',
            )
          : `one of ${names.join(', ')}`;
      throw new InputError('subcommand', `${what}; use ${use} (${help(this)})`);
    });
}

/** "lab cut": the command's path below the root. */
function pathOf(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

function rootOf(cmd: Command): Cli {
  let c = cmd;
  while (c.parent) c = c.parent;
  return c as Cli;
}

/** The top-level command (lab, certs, ...) that cmd belongs to. */
function topOf(cmd: Command): Command {
  let c = cmd;
  while (c.parent?.parent) c = c.parent;
  return c;
}

function listOf(items: string[], conj: string): string {
  return items.length <= 1
    ? (items[0] ?? '')
    : `${items.slice(0, -1).join(', ')} ${conj} ${items.at(-1)}`;
}

function oneLine(s: string): string {
  return s
    .replace(/^error: /, '')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' ');
}

function help(cmd: Command): string {
  return `see "hardwire ${pathOf(topOf(cmd))} --help"`;
}

/** An option this command does not take: say which subcommand takes it, if one does. */
function unknownOption(cmd: Command, arg: string, suggestion?: string): InputError {
  const flag = arg.split('=')[0] ?? arg;
  const takers: string[] = [];
  const visit = (c: Command) => {
    if (c !== cmd && c.options.some((o) => o.long === flag || o.short === flag))
      takers.push(`"${pathOf(c)}"`);
    c.commands.forEach(visit);
  };
  visit(topOf(cmd));
  if (takers.length > 0) return new InputError(flag, `only applies to ${listOf(takers, 'and')}`);
  return new InputError(
    flag,
    `unknown option${suggestion ? `; did you mean ${suggestion}?` : ''} (${help(cmd)})`,
  );
}

/** Commander's parse errors, by code, as one line naming the field and the fix. */
function parseError(cmd: Cli, message: string, code: string): InputError {
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? '';
  switch (code) {
    case 'commander.unknownOption':
      return unknownOption(cmd, quoted, /Did you mean (\S+)\?/.exec(message)?.[1]);
    case 'commander.optionMissingArgument': {
      // quoted is the option's flags, e.g. "-i, --inventory <file>"
      const flag = /--[\w-]+/.exec(quoted)?.[0] ?? quoted;
      return new InputError(
        flag,
        `needs a value: ${flag} ${quoted.split(' ').at(-1)} (${help(cmd)})`,
      );
    }
    case 'commander.missingArgument': {
      const arg = cmd.registeredArguments.find((a) => a.name() === quoted);
      return new InputError(
        quoted,
        `missing; ${arg?.description || `"hardwire ${pathOf(cmd)}" needs it`} (${help(cmd)})`,
      );
    }
    case 'commander.excessArguments': {
      const extra = cmd.args.slice(cmd.registeredArguments.length);
      const takes =
        cmd.registeredArguments.length === 0
          ? 'takes no arguments'
          : `takes ${cmd.registeredArguments.map((a) => `<${a.name()}>`).join(' ')}`;
      return new InputError(
        'argv',
        `unexpected ${extra.map((a) => `"${a}"`).join(' ')}; "hardwire ${pathOf(cmd)}" ${takes} (${help(cmd)})`,
      );
    }
    default:
      return new InputError('argv', `${oneLine(message)} (${help(cmd)})`);
  }
}
