// Options shared by commands that read an inventory.
import { loadInventory, type Inventory } from '../inventory/load.ts';
import { defaultStateDir } from '../lib/paths.ts';
import type { Logger } from '../lib/log.ts';
import { InputError } from '../lib/errors.ts';
import { resolve } from 'node:path';

export const inventoryOptions = {
  inventory: { type: 'string', short: 'i' },
  'state-dir': { type: 'string' },
  json: { type: 'boolean' },
} as const;

export function stateDirFrom(values: { 'state-dir'?: string | undefined }): string {
  return values['state-dir'] ? resolve(values['state-dir']) : defaultStateDir();
}

export function requireInventory(values: { inventory?: string | undefined }, log: Logger): Inventory {
  if (!values.inventory) throw new InputError('--inventory', 'is required; pass an inventory file such as hosts/example.yaml');
  const inv = loadInventory(values.inventory);
  for (const w of inv.warnings) log.warn(w);
  return inv;
}
