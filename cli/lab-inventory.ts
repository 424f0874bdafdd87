// With no --inventory, host-touching commands use the built-in local lab.
import { existsSync, statSync } from 'node:fs';
import type { Inventory } from '../core/inventory/load.ts';
import { loadValidInventory } from '../core/validate/inventory.ts';
import type { Logger } from '../lib/log.ts';
import { InputError } from '../lib/errors.ts';
import { expandHome } from '../lib/paths.ts';
import { refuseDownLab, refuseRemovedLabInventory } from '../harness/lab/guard.ts';

/** Host-touching commands need a usable key (or an agent) before any connection is tried. */
export function checkSshIdentities(inv: Inventory): void {
  if (process.env.SSH_AUTH_SOCK) return;
  inv.hosts.forEach((h, i) => {
    const file = expandHome(h.ssh.identityFile);
    if (!existsSync(file) || !statSync(file).isFile()) {
      throw new InputError(`hosts[${i}].ssh.identityFile`, `${file} does not exist; point it at the private key for ${h.ssh.user}@${h.name}, or start ssh-agent`);
    }
  });
  if (inv.knownHostsFile && existsSync(inv.knownHostsFile) && !statSync(inv.knownHostsFile).isFile()) {
    throw new InputError('knownHosts', `${inv.knownHostsFile} is not a file`);
  }
}

export async function inventoryOrLab(opts: { inventory?: string | undefined; stateDir?: string | undefined }, log: Logger, bringUp: boolean): Promise<Inventory> {
  let file = opts.inventory;
  if (!file) {
    const lab = await import('../harness/lab/index.ts');
    const labOpts = { ...(opts.stateDir ? { stateDir: opts.stateDir } : {}), log };
    const info = bringUp ? await lab.labUp(labOpts) : await lab.labStatus(labOpts);
    log.info(`using the local lab "${info.name}": ${info.inventory}`);
    file = info.inventory;
  }
  // A lab that is down gets one line saying so, before anything tries to reach its addresses.
  refuseRemovedLabInventory(file);
  const inv = loadValidInventory(file);
  refuseDownLab(inv);
  checkSshIdentities(inv);
  for (const w of inv.warnings) log.warn(w);
  return inv;
}
