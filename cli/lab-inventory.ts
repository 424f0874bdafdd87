// With no --inventory, every command uses the built-in local lab: its hosts (inventoryOrLab), or
// only its inventory file (inventoryOrLabFile).
import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Inventory } from '../core/inventory/load.ts';
import { loadValidInventory } from '../core/validate/inventory.ts';
import type { Logger } from '../lib/log.ts';
import { InputError } from '../lib/errors.ts';
import { expandHome } from '../lib/paths.ts';
import { knownHostsProblem } from '../core/transport/known-hosts.ts';
import { connection, stateDirFrom, type HostOpts, type InventoryOpts } from './common.ts';
import { newContext, type WireContext } from '../core/apply/context.ts';
import { clusterStateDir } from '../core/pki/store.ts';

/**
 * Host-touching commands need a usable key (or an agent) before any connection is tried, and a
 * knownHosts file that --accept-new-host-keys may append to (core/transport/known-hosts.ts).
 */
export function checkSshIdentities(inv: Inventory, stateDir: string): void {
  const kh = inv.knownHostsFile;
  const problem =
    kh && knownHostsProblem(kh, [stateDir, dirname(inv.file), join(homedir(), '.ssh')]);
  if (problem) throw new InputError('knownHosts', problem);
  if (process.env.SSH_AUTH_SOCK) return;
  inv.hosts.forEach((h, i) => {
    const file = expandHome(h.ssh.identityFile);
    if (!existsSync(file) || !statSync(file).isFile()) {
      throw new InputError(
        `hosts[${i}].ssh.identityFile`,
        `${file} does not exist; point it at the private key for ${h.ssh.user}@${h.name}, or start ssh-agent`,
      );
    }
  });
}

export async function inventoryOrLab(
  opts: { inventory?: string | undefined; stateDir?: string | undefined },
  log: Logger,
  bringUp: boolean,
): Promise<Inventory> {
  let file = opts.inventory;
  if (!file) {
    const lab = await import('../harness/lab/index.ts');
    const labOpts = { ...(opts.stateDir ? { stateDir: opts.stateDir } : {}), log };
    const info = bringUp ? await lab.labUp(labOpts) : await lab.labStatus(labOpts);
    log.info(`using the local lab "${info.name}": ${info.inventory}`);
    file = info.inventory;
  }
  // A lab that is down gets one line saying so, before anything tries to reach its addresses.
  // (Imported here: it loads the SSH client, which pki and render, through inventoryOrLabFile, never need.)
  const { refuseDownLab, refuseRemovedLabInventory } = await import('../harness/lab/guard.ts');
  refuseRemovedLabInventory(file);
  const inv = loadValidInventory(file);
  refuseDownLab(inv);
  checkSshIdentities(inv, stateDirFrom(opts));
  for (const w of inv.warnings) log.warn(w);
  return inv;
}

/**
 * For commands that read the inventory and touch no host (pki, render, upgrade plan's offline
 * half): --inventory, else the local lab's inventory file, read as it is (the lab may be down).
 */
export async function inventoryOrLabFile(
  opts: { inventory?: string | undefined; stateDir?: string | undefined },
  log: Logger,
): Promise<Inventory> {
  let file = opts.inventory;
  if (!file) {
    const lab = await import('../harness/lab/index.ts');
    const { DEFAULT_LAB_NAME } = await import('../harness/lab/plan.ts');
    file = lab.labPaths(opts.stateDir ? { stateDir: opts.stateDir } : {}).inventory;
    if (!existsSync(file))
      throw new InputError(
        '--inventory',
        `not given, and the local lab "${DEFAULT_LAB_NAME}" has no inventory yet (${file}); run "hardwire lab up", or pass an inventory file such as hosts/example.yaml`,
      );
    log.info(`using the local lab's inventory: ${file}`);
  }
  const inv = loadValidInventory(file);
  for (const w of inv.warnings) log.warn(w);
  return inv;
}

/**
 * A host-touching command's apply context: the inventory (or the lab's hosts), its state dir, and
 * the connection flags hostOptions declared (the default gate timeout where it declares none).
 */
export async function hostContext(
  opts: InventoryOpts & HostOpts,
  log: Logger,
  dryRun: boolean,
): Promise<WireContext> {
  const inv = await inventoryOrLab(opts, log, false);
  const stateDir = stateDirFrom(opts);
  return newContext(
    inv,
    stateDir,
    clusterStateDir(stateDir, inv),
    { dryRun, ...connection(opts) },
    log,
  );
}
