// A command given a lab's inventory refuses to run while that lab is down, before it connects:
// with the lab's bridge gone, nothing on this machine answers at its addresses.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { InputError } from '../../lib/errors.ts';
import { cidrContains, type Cidr } from '../../lib/net.ts';
import { defaultStateDir } from '../../lib/paths.ts';
import { parseProxyJump } from '../../core/transport/dial.ts';
import { sshAddressOf } from '../../core/transport/session.ts';
import { readRoutes, type Route } from './routes.ts';
import { INNER_SUBNET, LAB_RANGE, labPlan, MAX_HOSTS } from './plan.ts';

interface InventoryLike {
  file: string;
  cluster: { name: string };
  hosts: { name: string; address: string; ssh?: { proxyJump?: string; address?: string } }[];
}

/** The lab an inventory was written for: its cluster name is a lab name and its hosts are exactly that lab's (with any inner count). */
export function labNameOf(inv: Omit<InventoryLike, 'file'>): string | undefined {
  if (inv.hosts.length < 1 || inv.hosts.length > MAX_HOSTS) return undefined;
  for (let inner = 0; inner < inv.hosts.length; inner++) {
    try {
      const plan = labPlan(inv.cluster.name, inv.hosts.length, '/', inner);
      if (
        plan.hosts.every(
          (h, i) => inv.hosts[i]!.name === h.name && inv.hosts[i]!.address === h.address,
        )
      )
        return plan.name;
    } catch {
      return undefined; // not a valid lab name or host count
    }
  }
  return undefined;
}

/** The address this machine connects to for the host, and its field: its SSH address, or its first jump host's. */
function firstHop(
  h: InventoryLike['hosts'][number],
  i: number,
): { address: string; field: string } {
  const jump = parseProxyJump(h.ssh?.proxyJump ?? '', 'root')[0];
  return jump
    ? { address: jump.address, field: `hosts[${i}].ssh.proxyJump` }
    : {
        address: sshAddressOf(h),
        field: h.ssh?.address === undefined ? `hosts[${i}].address` : `hosts[${i}].ssh.address`,
      };
}

/** `<stateDir>/lab/<name>/inventory.yaml`, the path `lab up` writes, split into its parts. */
export function labInventoryPath(file: string): { stateDir: string; name: string } | undefined {
  const m = /^(.*)\/lab\/([a-z0-9][-a-z0-9]*)\/inventory\.yaml$/.exec(resolve(file));
  return m ? { stateDir: m[1] || '/', name: m[2]! } : undefined;
}

function upCommand(name: string, file: string): string {
  const p = labInventoryPath(file);
  const env =
    p && p.name === name && p.stateDir !== defaultStateDir() ? `HARDWIRE_STATE=${p.stateDir} ` : '';
  return `${env}hardwire lab up --name ${name}`;
}

/** A missing file at a lab inventory's path: `lab down` removed the lab with its directory. */
export function refuseRemovedLabInventory(file: string): void {
  const p = labInventoryPath(file);
  if (!p || existsSync(file)) return;
  throw new InputError(
    '--inventory',
    `${file} is gone: lab "${p.name}" is down (lab down removes its directory); bring it up with: ${upCommand(p.name, file)}`,
  );
}

/** Subnets that this machine's lab bridges (hwb*) serve: their connected routes, so a bridge set down serves nothing. */
function labBridgeSubnets(routes: Route[]): Cidr[] {
  return routes
    .filter((r) => r.iface.startsWith('hwb') && r.up && !r.reject && r.gateway === 0)
    .map((r) => r.cidr);
}

function labRangeIsUnreachable(routes: Route[]): boolean {
  return routes.some(
    (r) => r.reject && r.cidr.base === LAB_RANGE.base && r.cidr.bits === LAB_RANGE.bits,
  );
}

/**
 * Refuses an inventory whose hosts are lab addresses that no lab bridge on this machine serves.
 * It applies to a lab's inventory (or a copy), and to any inventory with lab-range addresses once this
 * machine keeps the lab range unreachable; an address in that range but on a real network, on a
 * machine that never ran a lab, is left alone.
 */
export function refuseDownLab(inv: InventoryLike): void {
  // A host behind a jump host (a lab's inner host) is reached through its first hop: that address is the one to check.
  const inRange = inv.hosts
    .map((h, i) => firstHop(h, i))
    .filter((h) => cidrContains(LAB_RANGE, h.address));
  if (inRange.length === 0) return;
  const lab = labNameOf(inv);
  const table = readRoutes();
  if (!lab && !labRangeIsUnreachable(table)) return;
  // No lab bridge ever serves the inner network: a host there is reached only through its bastion.
  const inner = inRange.find((h) => cidrContains(INNER_SUBNET, h.address));
  if (inner) {
    throw new InputError(
      inner.field,
      `${inner.address} is on a hardwire lab's inner network (${INNER_SUBNET.text}), which this machine has no route to; reach it through the lab's bastion with ssh.proxyJump: root@<node1's address>, as "lab up" writes it`,
    );
  }
  const subnets = labBridgeSubnets(table);
  const orphans = inRange.filter((h) => !subnets.some((c) => cidrContains(c, h.address)));
  if (orphans.length === 0) return;
  if (lab) {
    throw new InputError(
      '--inventory',
      `lab "${lab}" is down: no lab bridge on this machine serves ${[...new Set(orphans.map((h) => h.address))].join(', ')}; bring it up with: ${upCommand(lab, inv.file)}`,
    );
  }
  const { address, field } = orphans[0]!;
  throw new InputError(
    field,
    `${address} is a hardwire lab address (${LAB_RANGE.text}), but no lab bridge on this machine serves it: its lab is down; bring that lab up first`,
  );
}
