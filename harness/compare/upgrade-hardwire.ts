// hardwire's side of compare's "Upgrade to <version>": its own `upgrade plan` for the hardwire plane
// (the same planFor as `hardwire upgrade plan`, then its live checks unless --no-live), and the same
// flag-level checks (core/upgrade) run on the flags the kubeadm plane's manifests pass: what
// hardwire says about the very command lines `kubeadm upgrade plan` was run against.
import type { Inventory } from '../../core/inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import { planFor } from '../../cli/commands/upgrade.ts';
import { liveFor, type Live } from '../../core/upgrade/live.ts';
import { planDoc, type PlanDoc } from '../../core/upgrade/format.ts';
import { planUpgrade, type ComponentPlan } from '../../core/upgrade/plan.ts';
import { planGates, type GatePlan } from '../../core/upgrade/gates.ts';
import { loadApiLifecycle } from '../flags/api-lifecycle.ts';
import { loadFlagMap } from '../flags/map.ts';
import { loadGateData } from '../flags/gates.ts';
import { flagsOf } from './normalize.ts';
import { DEFAULT_GATE_TIMEOUT_MS } from '../../lib/constants.ts';
import type { Component, ComponentCommand } from './types.ts';

/** hardwire's plan of its own plane, as `hardwire upgrade plan --to <to>` makes it; a refused live check is the reason, not an abort. */
export async function hardwirePlan(inv: Inventory, stateDir: string, to: string, live: boolean, log: Logger): Promise<PlanDoc> {
  const offline = planFor(inv, to);
  const { blocking: _, ...rest } = offline;
  let checked: Live;
  if (!live) checked = { checked: false, skipped: '--no-live: verify\'s gates and the objects stored in removed APIs were not read' };
  else {
    try {
      checked = await liveFor(inv, stateDir, loadApiLifecycle(to), offline.from, to, { gateTimeoutMs: DEFAULT_GATE_TIMEOUT_MS, log, who: 'plan' });
    } catch (err) {
      checked = { checked: false, skipped: `the live checks refused: ${err instanceof Error ? err.message : String(err)}` };
    }
  }
  return planDoc({ ...rest, live: checked });
}

/** The flag and feature-gate plan of command lines read from another plane (kubeadm's manifests), at from → to. */
export function planOfCommands(commands: Partial<Record<Component, ComponentCommand>>, from: string, to: string): { components: ComponentPlan[]; gates: GatePlan[] } {
  const present = (Object.keys(commands) as Component[]).filter((c) => commands[c]);
  const passed = Object.fromEntries(present.map((c) => [c, [...flagsOf(commands[c]!.argv)].map(([name, value]) => ({ name, value }))]));
  const fromMaps = Object.fromEntries(present.map((c) => [c, loadFlagMap(c, from)]));
  const toMaps = Object.fromEntries(present.map((c) => [c, loadFlagMap(c, to)]));
  const versions = Object.fromEntries(present.map((c): [string, [string, string]] => [c, [fromMaps[c]!.componentVersion, toMaps[c]!.componentVersion]]));
  const gates = loadGateData(from) && loadGateData(to) ? planGates({ from: loadGateData(from)!, to: loadGateData(to)!, passed, versions }) : [];
  return { components: planUpgrade({ from: fromMaps, to: toMaps, passed }), gates };
}
