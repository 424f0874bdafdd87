// Names and addresses of a lab, derived from its name alone so they are stable across runs.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { InputError } from '../../lib/errors.ts';
import { cidrContains, cidrsOverlap, parseCidr, type Cidr } from '../../lib/net.ts';
import { defaultStateDir } from '../../lib/paths.ts';

export const DEFAULT_LAB_NAME = 'lab';
export const DEFAULT_HOSTS = 3;
export const MAX_HOSTS = 16;

/** Ranges a lab address must stay out of: the default service and pod CIDRs, and this machine's uplink. */
const RESERVED = ['10.96.0.0/12', '10.244.0.0/16', '192.0.2.0/24'].map((c) => parseCidr(c)!);

/** Every lab subnet is a /24 inside this /16; once a lab was made here, the /16 is `unreachable` (lab/route.ts). */
const LAB_NET = '10.213';
export const LAB_RANGE = parseCidr(`${LAB_NET}.0.0/16`)!;
/**
 * The inner network of every lab made with `--inner` (lab/inner.ts). Lab bridges take third octets 1..254,
 * so no lab ever routes this /24 on this machine: it stays under the lab range's unreachable route. Labs can
 * share it, since each lab's inner network is its own segment that only its containers are on.
 */
export const INNER_SUBNET = parseCidr(`${LAB_NET}.255.0/24`)!;

export interface LabHostPlan {
  name: string;
  address: string;
  /** nspawn machine name (unique per lab and host). */
  machine: string;
  /** Host-side veth; its peer is host0 inside the container. */
  veth: string;
  /** Inner hosts: the bastion's address, the only way this machine reaches them (their host0 is on the inner network). */
  jump?: string;
  /** The bastion: its second interface (inner0) on the inner network. */
  innerLink?: { veth: string; address: string };
}

export interface InnerNetPlan {
  subnet: string;
  /** A bridge without any address on this machine, so this machine has no route onto it. */
  bridge: string;
  prefix: number;
  /** Name of the host on both networks. */
  bastion: string;
}

export interface LabPlan {
  name: string;
  dir: string;
  subnet: Cidr;
  bridge: string;
  bridgeAddress: string;
  prefix: number;
  hosts: LabHostPlan[];
  inner?: InnerNetPlan;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function validateLabName(name: string): void {
  if (!DNS_LABEL.test(name) || name.length > 40) {
    throw new InputError(
      '--name',
      `"${name}" must be a DNS label of at most 40 characters (lowercase letters, digits, "-"), e.g. lab`,
    );
  }
}

export function validateHostCount(n: number): void {
  if (!Number.isInteger(n) || n < 1 || n > MAX_HOSTS)
    throw new InputError('--hosts', `must be a whole number from 1 to ${MAX_HOSTS}`);
}

export function validateInnerCount(inner: number, hosts: number): void {
  if (!Number.isInteger(inner) || inner < 0 || inner >= hosts) {
    throw new InputError(
      '--inner',
      `must be a whole number from 0 to ${hosts - 1}: node1 is the bastion and stays on the lab network, so at most --hosts minus 1 hosts sit behind it`,
    );
  }
}

export function labDir(name: string, stateDir = defaultStateDir()): string {
  return join(stateDir, 'lab', name);
}

/**
 * `dedicated` of the last hosts are workers only, the others etcd + control plane with no kubelet, as
 * hardwire runs a control plane (kubelet and kube-proxy go on workers only, components/registry):
 * compare's hardwire plane (node1 its control plane, node2 its worker). Needs worker hosts and no inner ones.
 */
export function validateDedicatedWorkers(
  dedicated: number,
  hosts: number,
  workers: boolean,
  inner: number,
): void {
  if (!Number.isInteger(dedicated) || dedicated < 0 || dedicated >= hosts) {
    throw new InputError(
      '--dedicated-workers',
      `must be a whole number from 0 to ${hosts - 1}: node1 stays etcd and control plane, so at most --hosts minus 1 hosts are workers only`,
    );
  }
  if (dedicated > 0 && !workers)
    throw new InputError(
      '--dedicated-workers',
      'needs --workers: a worker-only host runs containerd, runc and a kubelet',
    );
  if (dedicated > 0 && inner > 0)
    throw new InputError(
      '--dedicated-workers',
      'cannot be combined with --inner (inner hosts are etcd only); drop one of them',
    );
}

/** The last `inner` hosts sit on the inner network, behind node1. */
export function labPlan(name: string, hostCount: number, stateDir?: string, inner = 0): LabPlan {
  validateLabName(name);
  validateHostCount(hostCount);
  validateInnerCount(inner, hostCount);
  const h = createHash('sha256').update(name).digest('hex');
  // <LAB_RANGE>.<1..254>.0/24: third octet from the name; a clash between two names is caught by the route check.
  const net = `${LAB_NET}.${(parseInt(h.slice(0, 4), 16) % 254) + 1}`;
  const subnet = parseCidr(`${net}.0/24`)!;
  const tag = h.slice(0, 7);
  const hosts = Array.from({ length: hostCount }, (_, i): LabHostPlan => {
    const host = `node${i + 1}`;
    return {
      name: host,
      address: `${net}.${11 + i}`,
      machine: `hw-${tag}-${host}`,
      veth: `hwv${tag}-${i + 1}`,
    };
  });
  for (const a of [`${net}.1`, ...hosts.map((x) => x.address)]) {
    for (const r of RESERVED)
      if (cidrContains(r, a)) throw new Error(`lab address ${a} lies in reserved ${r.text}`);
  }
  const plan: LabPlan = {
    name,
    dir: labDir(name, stateDir),
    subnet,
    bridge: `hwb${tag}`,
    bridgeAddress: `${net}.1`,
    prefix: 24,
    hosts,
  };
  if (inner === 0) return plan;
  // Same last octet on either network: node2 is .12 on the lab network or on the inner one.
  const innerAddress = (i: number) =>
    `${INNER_SUBNET.text.split('.').slice(0, 3).join('.')}.${11 + i}`;
  const bastion = hosts[0]!;
  bastion.innerLink = { veth: `hwx${tag}-1`, address: innerAddress(0) };
  hosts.forEach((h, i) => {
    if (i < hostCount - inner) return;
    h.address = innerAddress(i);
    h.jump = bastion.address;
  });
  return {
    ...plan,
    inner: { subnet: INNER_SUBNET.text, bridge: `hwi${tag}`, prefix: 24, bastion: bastion.name },
  };
}

/**
 * Routes (from `ip -j route`) that would collide with the lab subnet, or with its inner network (which must
 * stay unrouted here), other than the lab's own bridge and the lab range's unreachable route.
 */
export function collidingRoutes(
  routes: { type?: string; dst?: string; dev?: string }[],
  plan: LabPlan,
): string[] {
  const nets = [plan.subnet, ...(plan.inner ? [INNER_SUBNET] : [])];
  const out: string[] = [];
  for (const r of routes) {
    if (!r.dst || r.dst === 'default' || r.dev === plan.bridge) continue;
    if (r.type === 'unreachable' && r.dst === LAB_RANGE.text) continue; // hardwire's own safety net
    const c = parseCidr(r.dst.includes('/') ? r.dst : `${r.dst}/32`);
    if (c && nets.some((n) => cidrsOverlap(c, n))) out.push(`${r.dst} dev ${r.dev ?? '?'}`);
  }
  return out;
}
