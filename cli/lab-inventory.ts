// With no --inventory, host-touching commands use the built-in local lab.
import { loadInventory, type Inventory } from '../inventory/load.ts';
import type { Logger } from '../lib/log.ts';

export async function inventoryOrLab(values: { inventory?: string | undefined; 'state-dir'?: string | undefined }, log: Logger, bringUp: boolean): Promise<Inventory> {
  let file = values.inventory;
  if (!file) {
    const lab = await import('../lab/index.ts');
    const opts = { ...(values['state-dir'] ? { stateDir: values['state-dir'] } : {}), log };
    const info = bringUp ? await lab.labUp(opts) : await lab.labStatus(opts);
    log.info(`using the local lab "${info.name}": ${info.inventory}`);
    file = info.inventory;
  }
  const inv = loadInventory(file);
  for (const w of inv.warnings) log.warn(w);
  return inv;
}
