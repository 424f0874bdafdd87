// This machine's IPv4 routes, read from /proc/net/route: the lab guard runs on every command, and a
// file read costs a fraction of spawning `ip` twice (about 0.15 s of a no-op wire).
import { readFileSync } from 'node:fs';
import { intToIpv4, type Cidr } from '../../lib/net.ts';

export interface Route {
  iface: string;
  cidr: Cidr;
  gateway: number;
  up: boolean;
  reject: boolean;
}

const RTF_UP = 0x0001;
const RTF_REJECT = 0x0200; // unreachable, prohibit and blackhole routes; their Iface is "*"

/** /proc/net/route prints each address as the hex of its bytes in memory: little-endian on x86 and arm64. */
function hexAddr(hex: string): number {
  const n = Number.parseInt(hex, 16);
  return (
    (n & 0xff) * 2 ** 24 +
    (((n >>> 8) & 0xff) << 16) +
    (((n >>> 16) & 0xff) << 8) +
    ((n >>> 24) & 0xff)
  );
}

export function parseRoutes(text: string): Route[] {
  return text
    .split('\n')
    .slice(1)
    .flatMap((line) => {
      const f = line.trim().split(/\s+/);
      if (f.length < 8) return [];
      const base = hexAddr(f[1]!);
      const mask = hexAddr(f[7]!);
      const bits = mask.toString(2).replace(/0+$/, '').length;
      const flags = Number.parseInt(f[3]!, 16);
      return [
        {
          iface: f[0]!,
          cidr: {
            base,
            bits: mask === 0 ? 0 : bits,
            text: `${intToIpv4(base)}/${mask === 0 ? 0 : bits}`,
          },
          gateway: hexAddr(f[2]!),
          up: (flags & RTF_UP) !== 0,
          reject: (flags & RTF_REJECT) !== 0,
        },
      ];
    });
}

export function readRoutes(file = '/proc/net/route'): Route[] {
  return parseRoutes(readFileSync(file, 'utf8'));
}
