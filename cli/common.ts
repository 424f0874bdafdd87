// Options more than one command takes, and the one place where option values are parsed and
// checked (numbers of seconds, whole numbers, choices): a bad value is one InputError line.
import { Option } from 'commander';
import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Cli } from './command.ts';
import { defaultStateDir } from '../lib/paths.ts';
import { InputError } from '../lib/errors.ts';
import { DEFAULT_GATE_TIMEOUT_MS } from '../lib/constants.ts';

/** A number of seconds greater than 0, or at least min. */
export function seconds(flag: string, min?: number): (value: string) => number {
  return (value) => {
    const n = value.trim() === '' ? Number.NaN : Number(value);
    if (min === undefined && !(Number.isFinite(n) && n > 0))
      throw new InputError(flag, `"${value}" is not a positive number of seconds`);
    if (min !== undefined && !(Number.isFinite(n) && n >= min))
      throw new InputError(flag, `"${value}" must be a number of seconds, at least ${min}`);
    return n;
  };
}

export function wholeNumber(flag: string): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value))
      throw new InputError(flag, `"${value}" is not a whole number; use e.g. ${flag} 3`);
    return Number(value);
  };
}

export function oneOf<T extends string>(flag: string, values: readonly T[]): (value: string) => T {
  return (value) => {
    if (!(values as readonly string[]).includes(value))
      throw new InputError(flag, `"${value}" is not one of ${values.join(', ')}`);
    return value as T;
  };
}

/**
 * A file an --md or --html report is written to, checked before any work starts: one line for a
 * directory or a missing parent directory. Returns the absolute path.
 */
export function outFile(flag: string, example: string): (value: string) => string {
  return (value) => {
    const abs = resolve(value);
    if (existsSync(abs) && statSync(abs).isDirectory())
      throw new InputError(flag, `${abs} is a directory; name a file such as ${example}`);
    if (!existsSync(dirname(abs)))
      throw new InputError(
        flag,
        `${dirname(abs)} does not exist; create it or name a file in an existing directory`,
      );
    return abs;
  };
}

export const options = {
  /** Every command that reads an inventory: without it, the built-in local lab's (cli/lab-inventory.ts). */
  inventory: () => new Option('-i, --inventory <file>', INVENTORY_DESCRIPTION),
  stateDir: () => new Option('--state-dir <dir>', 'operator state directory (default .hardwire)'),
  /** Always a boolean: the one JSON document goes to stdout, everything else to stderr. */
  json: () => new Option('--json', 'one JSON document on stdout'),
  /** --md FILE and --html FILE write a file, everywhere; the path is checked before any work. */
  md: (what = 'the report') =>
    new Option('--md <file>', `also write ${what} as Markdown to FILE`).argParser(
      outFile('--md', 'report.md'),
    ),
  html: (what = 'the report') =>
    new Option('--html <file>', `also write ${what} as one self-contained HTML file`).argParser(
      outFile('--html', 'report.html'),
    ),
  quiet: () => new Option('--quiet', 'no progress lines'),
  dryRun: () => new Option('--dry-run', 'print what would change; change nothing on any host'),
  acceptNewHostKeys: () =>
    new Option('--accept-new-host-keys', 'trust unknown host keys on first contact'),
  /** Every command that gates takes this; the value is in seconds, DEFAULT_GATE_TIMEOUT_MS by default. */
  gateTimeout: () =>
    new Option('--gate-timeout <seconds>', 'how long each gate waits')
      .argParser(seconds('--gate-timeout'))
      .default(DEFAULT_GATE_TIMEOUT_MS / 1000),
};

export const INVENTORY_DESCRIPTION = "inventory file (default: the local lab's)";

/** What hostOptions adds, as the action reads them. */
export interface HostOpts {
  acceptNewHostKeys?: boolean;
  gateTimeout?: number;
  quiet?: boolean;
}

/**
 * The options of every command that connects to an inventory's hosts, added by this one call:
 * --accept-new-host-keys and --quiet, and --gate-timeout SECONDS when it waits on gates. It marks
 * the command (Cli.connects), which test/cli-grammar.test.ts checks against its own list.
 */
export function hostOptions<C extends Cli>(cmd: C, o: { gates: boolean }): C {
  cmd.connects = { gates: o.gates };
  cmd.addOption(options.acceptNewHostKeys()).addOption(options.quiet());
  if (o.gates) cmd.addOption(options.gateTimeout());
  return cmd;
}

/**
 * An option's old spelling, kept hidden so that using it gives one line naming the new one (exit 2)
 * rather than "unknown option". arg: the old option took a value.
 */
export function renamed<C extends Cli>(cmd: C, old: string, now: string, arg?: string): C {
  const o = new Option(arg ? `${old} <${arg}>` : old, `renamed ${now}`).hideHelp();
  cmd.addOption(o);
  cmd.on(`option:${o.name()}`, () => {
    throw new InputError(
      old,
      `is now ${now} (one name per meaning across the CLI); use ${now}${arg ? ` ${arg.toUpperCase()}` : ''}`,
    );
  });
  return cmd;
}

/** The connection half of an apply context's options, from hostOptions' flags. */
export function connection(opts: HostOpts): { acceptNewHostKeys: boolean; gateTimeoutMs: number } {
  return { acceptNewHostKeys: opts.acceptNewHostKeys === true, gateTimeoutMs: gateTimeoutMs(opts) };
}

export interface InventoryOpts {
  inventory?: string;
  stateDir?: string;
}

/** --gate-timeout (seconds) as the gateTimeoutMs every apply context takes. */
export function gateTimeoutMs(opts: { gateTimeout?: number }): number {
  return opts.gateTimeout === undefined ? DEFAULT_GATE_TIMEOUT_MS : opts.gateTimeout * 1000;
}

export function stateDirFrom(opts: { stateDir?: string | undefined }): string {
  return opts.stateDir ? resolve(opts.stateDir) : defaultStateDir();
}
