// The inner network (`lab up --inner N`): a lab segment this machine cannot reach, behind node1 as bastion.
//
// Its bridge sits on this machine without any address, IPv6 included (so not even a link-local one), and
// so do the host-side veths on it: this machine has no route onto it. Its addresses (INNER_SUBNET, inside
// the lab range) fall under the lab range's unreachable route, so a direct connection fails here at once
// with EHOSTUNREACH. The bastion has a second interface, inner0, on it and forwards between its two
// networks; inner hosts route the lab subnet through the bastion's inner address, and the other lab hosts
// route the inner subnet through the bastion's lab address, so etcd peers on either side reach each
// other. This machine gets no such route: it reaches an inner host only over SSH through the bastion
// (the inventory's `ssh.proxyJump`).
import { existsSync, writeFileSync } from 'node:fs';
import type { LabHostState, LabState } from './state.ts';
import { linkExists } from './sys.ts';
import { run } from '../../lib/proc.ts';

/** No IPv6 on a link of the inner network here: without a link-local address this machine has no path onto it at all. */
function noIpv6(link: string): void {
  const f = `/proc/sys/net/ipv6/conf/${link}/disable_ipv6`;
  if (existsSync(f)) writeFileSync(f, '1');
}

/** The inner bridge, up and without any address. No-op for a lab without an inner network. */
export async function ensureInnerBridge(state: LabState): Promise<void> {
  if (!state.inner) return;
  const step = { step: 'lab-network' };
  const br = state.inner.bridge;
  if (!(await linkExists(br))) await run('ip', ['link', 'add', 'name', br, 'type', 'bridge'], step);
  noIpv6(br);
  await run('ip', ['addr', 'flush', 'dev', br], step);
  await run('ip', ['link', 'set', 'dev', br, 'up'], step);
}

/** An inner host is reached through its bastion, as its inventory says (`ssh.proxyJump`). */
export function proxyJumpOf(host: Pick<LabHostState, 'jump'>): string {
  return host.jump ? `root@${host.jump}` : '';
}

/** The bridge the host's host0 is on. */
export function bridgeOf(state: LabState, host: LabHostState): string {
  return host.jump ? state.inner!.bridge : state.bridge;
}

/** Host-side veths the host's nspawn makes: host0's, and the bastion's inner0. */
export function vethsOf(host: LabHostState): string[] {
  return [host.veth, ...(host.innerLink ? [host.innerLink.veth] : [])];
}

/** nspawn arguments for the bastion's second interface. */
export function innerNspawnArgs(host: LabHostState): string[] {
  return host.innerLink ? [`--network-veth-extra=${host.innerLink.veth}:inner0`] : [];
}

/** Before a host-side veth goes up: one on the inner network gets no IPv6 address here. */
export function beforeUp(host: LabHostState): void {
  if (host.jump) noIpv6(host.veth);
}

type InNs = (args: string[]) => Promise<unknown>;

/** Inside a booted host whose host0 is addressed: the bastion's inner0 and forwarding, and each side's route across it. */
export async function configureInner(
  state: LabState,
  host: LabHostState,
  init: number,
  inNs: InNs,
): Promise<void> {
  const inner = state.inner;
  if (!inner) return;
  const bastion = state.hosts.find((h) => h.name === inner.bastion)!;
  const step = { step: 'lab-network', host: host.name };
  if (host.innerLink) {
    const veth = host.innerLink.veth;
    noIpv6(veth);
    await run('ip', ['link', 'set', 'dev', veth, 'master', inner.bridge], step);
    await run('ip', ['link', 'set', 'dev', veth, 'up'], step);
    await inNs(['addr', 'replace', `${host.innerLink.address}/${inner.prefix}`, 'dev', 'inner0']);
    await inNs(['link', 'set', 'dev', 'inner0', 'up']);
    // Only in the bastion's own network namespace: this machine forwards nothing.
    await run(
      'nsenter',
      [`--target=${init}`, '--net', '--', 'sysctl', '-q', '-w', 'net.ipv4.ip_forward=1'],
      step,
    );
  } else if (host.jump) {
    await inNs([
      'route',
      'replace',
      state.subnet,
      'via',
      bastion.innerLink!.address,
      'dev',
      'host0',
    ]);
  } else {
    await inNs(['route', 'replace', inner.subnet, 'via', bastion.address, 'dev', 'host0']);
  }
}

/** For `lab down`: the bastion's inner veth and the inner bridge (host veths go with the other veths). */
export async function removeInner(state: LabState): Promise<void> {
  if (!state.inner) return;
  for (const h of state.hosts) {
    if (h.innerLink && (await linkExists(h.innerLink.veth)))
      await run('ip', ['link', 'delete', 'dev', h.innerLink.veth], {
        step: 'lab-down',
        host: h.name,
      });
  }
  if (await linkExists(state.inner.bridge))
    await run('ip', ['link', 'delete', 'dev', state.inner.bridge], { step: 'lab-down' });
}
