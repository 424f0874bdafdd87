// Every component's one-shot checks from the registry: what `hardwire verify` runs and what a
// drill's baseline and final state must pass, so "green" means the same everywhere.
import { COMPONENTS, type Check, type GateContext } from '../components/registry/index.ts';
import { timed, type CheckResult } from './smoke.ts';

export function gateChecks(ctx: GateContext): Check[] {
  return COMPONENTS.flatMap((c) => c.gate.checks(ctx));
}

/** All at once, since a Lease check watches for seconds; results in the registry's start order. */
export function runGateChecks(ctx: GateContext): Promise<CheckResult[]> {
  return Promise.all(gateChecks(ctx).map((c) => timed(c.name, c.run)));
}
