// Options more than one command takes, and the one place where option values are parsed and
// checked (numbers of seconds, whole numbers, choices): a bad value is one InputError line.
import { Option } from 'commander';
import { resolve } from 'node:path';
import type { Inventory } from '../core/inventory/load.ts';
import { loadValidInventory } from '../core/validate/inventory.ts';
import { defaultStateDir } from '../lib/paths.ts';
import type { Logger } from '../lib/log.ts';
import { InputError } from '../lib/errors.ts';
import { DEFAULT_GATE_TIMEOUT_MS } from '../lib/constants.ts';

/** A number of seconds greater than 0, or at least min. */
export function seconds(flag: string, min?: number): (value: string) => number {
  return (value) => {
    const n = value.trim() === '' ? Number.NaN : Number(value);
    if (min === undefined && !(Number.isFinite(n) && n > 0)) throw new InputError(flag, `"${value}" is not a positive number of seconds`);
    if (min !== undefined && !(Number.isFinite(n) && n >= min)) throw new InputError(flag, `"${value}" must be a number of seconds, at least ${min}`);
    return n;
  };
}

export function wholeNumber(flag: string): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value)) throw new InputError(flag, `"${value}" is not a whole number; use e.g. ${flag} 3`);
    return Number(value);
  };
}

export function oneOf<T extends string>(flag: string, values: readonly T[]): (value: string) => T {
  return (value) => {
    if (!(values as readonly string[]).includes(value)) throw new InputError(flag, `"${value}" is not one of ${values.join(', ')}`);
    return value as T;
  };
}

export const options = {
  inventory: () => new Option('-i, --inventory <file>', 'inventory file'),
  stateDir: () => new Option('--state-dir <dir>', 'operator state directory (default .hardwire)'),
  json: () => new Option('--json', 'one JSON document on stdout'),
  quiet: () => new Option('--quiet', 'no progress lines'),
  dryRun: () => new Option('--dry-run', 'print what would change; change nothing on any host'),
  acceptNewHostKeys: () => new Option('--accept-new-host-keys', 'trust unknown host keys on first contact'),
  /** Every command that gates takes this; the value is in seconds, DEFAULT_GATE_TIMEOUT_MS by default. */
  gateTimeout: () => new Option('--gate-timeout <seconds>', 'how long each gate waits')
    .argParser(seconds('--gate-timeout'))
    .default(DEFAULT_GATE_TIMEOUT_MS / 1000),
};

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

export function requireInventory(opts: { inventory?: string | undefined }, log: Logger): Inventory {
  if (!opts.inventory) throw new InputError('--inventory', 'is required; pass an inventory file such as hosts/example.yaml');
  const inv = loadValidInventory(opts.inventory);
  for (const w of inv.warnings) log.warn(w);
  return inv;
}
