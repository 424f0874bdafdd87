// IPv4 and CIDR arithmetic for the inventory checks and the apiserver's service IP.
import { isIPv4 } from 'node:net';

export interface Cidr {
  base: number;
  bits: number;
  text: string;
}

export function ipv4ToInt(ip: string): number {
  return ip.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
}

export function intToIpv4(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

/** Parses "a.b.c.d/n"; returns undefined when it is not a canonical IPv4 CIDR. */
export function parseCidr(text: string): Cidr | undefined {
  const m = /^([\d.]+)\/(\d{1,2})$/.exec(text);
  if (!m || !isIPv4(m[1]!)) return undefined;
  const bits = Number(m[2]);
  if (bits > 32) return undefined;
  const ip = ipv4ToInt(m[1]!);
  const size = 2 ** (32 - bits);
  if (ip % size !== 0) return undefined; // host bits set: not a network address
  return { base: ip, bits, text };
}

export function cidrSize(c: Cidr): number {
  return 2 ** (32 - c.bits);
}

export function cidrsOverlap(a: Cidr, b: Cidr): boolean {
  return a.base < b.base + cidrSize(b) && b.base < a.base + cidrSize(a);
}

export function cidrContains(c: Cidr, ip: string): boolean {
  const n = ipv4ToInt(ip);
  return n >= c.base && n < c.base + cidrSize(c);
}

/** The first usable address, which the apiserver gives the `kubernetes` Service. */
export function firstServiceIp(c: Cidr): string {
  return intToIpv4(c.base + 1);
}

/** The n-th address of a CIDR (kubeadm's GetIndexedIP): the 10th of the service CIDR is cluster DNS. */
export function indexedIp(c: Cidr, n: number): string {
  return intToIpv4(c.base + n);
}
