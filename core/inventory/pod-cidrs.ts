// Each worker's pod range: given per host (hosts[i].podCIDR) or the next free node range of
// cluster.podCIDR, in host order. The kubelet, the CNI bridge's host-local IPAM and the routes
// between nodes all use it, so it is fixed in the inventory rather than left to an allocator.
import { InputError } from '../../lib/errors.ts';
import {
  cidrContains,
  cidrSize,
  cidrsOverlap,
  intToIpv4,
  parseCidr,
  type Cidr,
} from '../../lib/net.ts';

interface HostIn {
  name: string;
  address: string;
  roles: readonly string[];
  podCIDR?: string | undefined;
}

/**
 * Pod CIDR per worker name. Given ones must be network CIDRs inside the cluster's pod CIDR and
 * disjoint from each other. Inside it, none can overlap the service CIDR or hold a node address:
 * load.ts refuses a pod CIDR that overlaps the service CIDR and host addresses inside the pod CIDR.
 * Derived ones are `mask`-sized, the first in order that overlap no given one.
 */
export function podCidrsFor(hosts: readonly HostIn[], pod: Cidr, mask: number): Map<string, Cidr> {
  const out = new Map<string, Cidr>();
  const given: { i: number; c: Cidr }[] = [];
  hosts.forEach((h, i) => {
    if (h.podCIDR === undefined) return;
    const field = `hosts[${i}].podCIDR`;
    if (!h.roles.includes('worker'))
      throw new InputError(
        field,
        'only a worker gets a pod CIDR; add "worker" to its roles or remove podCIDR',
      );
    const c = parseCidr(h.podCIDR);
    if (!c)
      throw new InputError(
        field,
        `"${h.podCIDR}" is not an IPv4 network CIDR such as 10.244.1.0/24`,
      );
    if (c.bits < pod.bits || !cidrContains(pod, intToIpv4(c.base)))
      throw new InputError(
        field,
        `${c.text} is not inside cluster.podCIDR ${pod.text}; pick a range inside it`,
      );
    const clash = given.find((g) => cidrsOverlap(g.c, c));
    if (clash)
      throw new InputError(
        field,
        `${c.text} overlaps hosts[${clash.i}].podCIDR ${clash.c.text}; each worker needs its own range`,
      );
    given.push({ i, c });
    out.set(h.name, c);
  });
  const step = 2 ** (32 - mask);
  let next = pod.base;
  hosts.forEach((h, i) => {
    if (!h.roles.includes('worker') || out.has(h.name)) return;
    for (;;) {
      if (next + step > pod.base + cidrSize(pod)) {
        throw new InputError(
          `hosts[${i}].podCIDR`,
          `cluster.podCIDR ${pod.text} has no free /${mask} left for ${h.name}; widen cluster.podCIDR or give the worker a podCIDR`,
        );
      }
      const c: Cidr = { base: next, bits: mask, text: `${intToIpv4(next)}/${mask}` };
      next += step;
      if (!given.some((g) => cidrsOverlap(g.c, c))) {
        out.set(h.name, c);
        break;
      }
    }
  });
  return out;
}
