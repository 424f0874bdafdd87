// Names and addresses of a lab, derived from its name alone so they are stable across runs.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { InputError } from '../lib/errors.ts';
import { cidrContains, cidrsOverlap, parseCidr, type Cidr } from '../lib/net.ts';
import { defaultStateDir } from '../lib/paths.ts';

export const DEFAULT_LAB_NAME = 'lab';
export const DEFAULT_HOSTS = 3;
export const MAX_HOSTS = 16;

/** Ranges a lab address must stay out of: the default service and pod CIDRs, and this machine's uplink. */
const RESERVED = ['10.96.0.0/12', '10.244.0.0/16', '192.0.2.0/24'].map((c) => parseCidr(c)!);

/** Every lab subnet is a /24 inside this /16; once a lab was made here, the /16 is `unreachable` (lab/route.ts). */
const LAB_NET = '10.213';
export const LAB_RANGE = parseCidr(`${LAB_NET}.0.0/16`)!;

export interface LabHostPlan {
  name: string;
  address: string;
  /** nspawn machine name (unique per lab and host). */
  machine: string;
  /** Host-side veth; its peer is host0 inside the container. */
  veth: string;
}

export interface LabPlan {
  name: string;
  dir: string;
  subnet: Cidr;
  bridge: string;
  bridgeAddress: string;
  prefix: number;
  hosts: LabHostPlan[];
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function validateLabName(name: string): void {
  if (!DNS_LABEL.test(name) || name.length > 40) {
    throw new InputError('--name', `"${name}" must be a DNS label of at most 40 characters (lowercase letters, digits, "-"), e.g. lab`);
  }
}

export function validateHostCount(n: number): void {
  if (!Number.isInteger(n) || n < 1 || n > MAX_HOSTS) throw new InputError('--hosts', `must be a whole number from 1 to ${MAX_HOSTS}`);
}

export function labDir(name: string, stateDir = defaultStateDir()): string {
  return join(stateDir, 'lab', name);
}

export function labPlan(name: string, hostCount: number, stateDir?: string): LabPlan {
  validateLabName(name);
  validateHostCount(hostCount);
  const h = createHash('sha256').update(name).digest('hex');
  // <LAB_RANGE>.<1..254>.0/24: third octet from the name; a clash between two names is caught by the route check.
  const net = `${LAB_NET}.${(parseInt(h.slice(0, 4), 16) % 254) + 1}`;
  const subnet = parseCidr(`${net}.0/24`)!;
  const tag = h.slice(0, 7);
  const hosts = Array.from({ length: hostCount }, (_, i) => {
    const host = `node${i + 1}`;
    return { name: host, address: `${net}.${11 + i}`, machine: `hw-${tag}-${host}`, veth: `hwv${tag}-${i + 1}` };
  });
  for (const a of [`${net}.1`, ...hosts.map((x) => x.address)]) {
    for (const r of RESERVED) if (cidrContains(r, a)) throw new Error(`lab address ${a} lies in reserved ${r.text}`);
  }
  return { name, dir: labDir(name, stateDir), subnet, bridge: `hwb${tag}`, bridgeAddress: `${net}.1`, prefix: 24, hosts };
}

/** Routes (from `ip -j route`) that would collide with the lab subnet, other than the lab's own bridge and the lab range's unreachable route. */
export function collidingRoutes(routes: { type?: string; dst?: string; dev?: string }[], plan: LabPlan): string[] {
  const out: string[] = [];
  for (const r of routes) {
    if (!r.dst || r.dst === 'default' || r.dev === plan.bridge) continue;
    if (r.type === 'unreachable' && r.dst === LAB_RANGE.text) continue; // hardwire's own safety net
    const c = parseCidr(r.dst.includes('/') ? r.dst : `${r.dst}/32`);
    if (c && cidrsOverlap(c, plan.subnet)) out.push(`${r.dst} dev ${r.dev ?? '?'}`);
  }
  return out;
}
