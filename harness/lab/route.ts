// The lab range's safety net: `unreachable 10.213.0.0/16` in this machine's main routing table.
//
// Each lab bridge brings its own /24 route (more specific, so it wins). Without the /16, a lab address
// whose bridge is gone (after `lab down`, after a reboot, or for a lab of another state dir) would
// follow the default route off this machine, to a private address no lab owns. With it, a connection
// fails here at once with EHOSTUNREACH.
//
// When: added before any lab bridge is created (`lab up`, `lab start`) and again by `lab down` before
// it deletes the bridge, so a lab made by an older hardwire is covered too. Never removed by
// hardwire: operator state (inventories, kubeconfigs under .hardwire/) keeps naming lab addresses after
// the last lab is gone, and one state dir cannot see the labs of another, so no `lab down` can prove
// that removing it is safe. A reboot clears it with the bridges; the next lab command adds it back.
// Remove it by hand with `ip route del unreachable 10.213.0.0/16` once no lab addresses are in use.
import { StepError } from '../../lib/errors.ts';
import { run } from '../../lib/proc.ts';
import { LAB_RANGE } from './plan.ts';

interface Route {
  type?: string;
  dst?: string;
  dev?: string;
  gateway?: string;
}

/** The main-table route for exactly the lab range, if any. */
async function labRangeRoute(): Promise<Route | undefined> {
  const r = await run('ip', ['-j', '-4', 'route', 'show', 'exact', LAB_RANGE.text], {
    step: 'lab-network',
  });
  return (JSON.parse(r.stdout || '[]') as Route[])[0];
}

function describe(r: Route): string {
  return [
    r.type && r.type !== 'unicast' ? r.type : '',
    r.dst,
    r.gateway ? `via ${r.gateway}` : '',
    r.dev ? `dev ${r.dev}` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

/** Idempotent; safe against a concurrent lab command doing the same. Refuses to replace a route someone else set. */
export async function ensureLabRangeUnreachable(): Promise<void> {
  const existing = await labRangeRoute();
  if (existing?.type === 'unreachable') return;
  if (existing) {
    throw new StepError(
      'lab-network',
      `${LAB_RANGE.text} is routed by "${describe(existing)}", but hardwire labs need that range kept on this machine; move that route or network elsewhere`,
    );
  }
  const added = await run('ip', ['route', 'add', 'unreachable', LAB_RANGE.text], {
    step: 'lab-network',
    allowFail: true,
  });
  // EEXIST from a concurrent lab command is fine as long as the route it added is ours.
  if (added.code !== 0 && (await labRangeRoute())?.type !== 'unreachable') {
    throw new StepError(
      'lab-network',
      `cannot add "unreachable ${LAB_RANGE.text}": ${added.stderr.trim()}`,
    );
  }
}
