// hardwire's side of compare's "Upgrade to <version>": its own `upgrade plan` for the hardwire plane
// (the same planFor as `hardwire upgrade plan`, then its live checks unless --no-live), and the same
// flag-level checks (core/upgrade) run on the flags the kubeadm plane's manifests pass: what
// hardwire says about the very command lines `kubeadm upgrade plan` was run against.
import type { Inventory } from '../../core/inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import { planFor } from '../../core/upgrade/plan-for.ts';
import { liveFor, type Live } from '../../core/upgrade/live.ts';
import { planDoc, type PlanDoc } from '../../core/upgrade/format.ts';
import { planUpgrade, type ComponentPlan } from '../../core/upgrade/plan.ts';
import { planGates, type GatePlan } from '../../core/upgrade/gates.ts';
import { loadApiLifecycle } from '../../core/flags/api-lifecycle.ts';
import { loadFlagMap, type FlagMap } from '../../core/flags/map.ts';
import { loadGateData } from '../../core/flags/gates.ts';
import { flagsOf } from '../planes/normalize.ts';
import { DEFAULT_GATE_TIMEOUT_MS } from '../../lib/constants.ts';
import type { Component, ComponentCommand } from '../planes/types.ts';
import { parse as parseYaml } from 'yaml';
import type { PassedField } from '../../core/upgrade/fields.ts';
import type { PassedFlag } from '../../core/upgrade/plan.ts';
import type { PlaneNode } from '../planes/node-types.ts';

/** hardwire's plan of its own plane, as `hardwire upgrade plan --to <to>` makes it; a refused live check is the reason, not an abort. */
export async function hardwirePlan(
  inv: Inventory,
  stateDir: string,
  to: string,
  live: boolean,
  log: Logger,
): Promise<PlanDoc> {
  const offline = planFor(inv, to);
  const { blocking: _, ...rest } = offline;
  let checked: Live;
  if (!live)
    checked = {
      checked: false,
      skipped: "--no-live: verify's gates and the objects stored in removed APIs were not read",
    };
  else {
    try {
      checked = await liveFor(inv, stateDir, loadApiLifecycle(to), offline.from, to, {
        gateTimeoutMs: DEFAULT_GATE_TIMEOUT_MS,
        log,
        who: 'plan',
      });
    } catch (err) {
      checked = {
        checked: false,
        skipped: `the live checks refused: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
  }
  return planDoc({ ...rest, live: checked });
}

/**
 * A config file's fields by json path, as `passedFields` gives the rendered ones, down to the depth
 * the flag map knows: the map stops at a struct whose fields are inlined from an embedded type
 * (`logging.options.json`, whose `infoBufferSize` comes from OutputRoutingOptions), so its value is
 * that subtree as JSON. apiVersion and kind are the document's type, not fields.
 */
export function fieldsOfConfig(yaml: string, map: FlagMap): PassedField[] {
  const doc = (parseYaml(yaml) ?? {}) as Record<string, unknown>;
  const known = new Set((map.config?.fields ?? []).map((f) => f.key));
  // Every proper prefix of a known key (`logging`, `logging.options` of `logging.options.json`): walked into.
  const inner = new Set(
    [...known].flatMap((k) =>
      k
        .split('.')
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join('.')),
    ),
  );
  const walk = (key: string, v: unknown): PassedField[] =>
    v !== null &&
    typeof v === 'object' &&
    !Array.isArray(v) &&
    Object.keys(v).length > 0 &&
    (inner.has(key) || !known.has(key))
      ? Object.entries(v).flatMap(([k, x]) => walk(`${key}.${k}`, x))
      : [{ key, value: JSON.stringify(v) }];
  return Object.entries(doc)
    .filter(([k]) => k !== 'apiVersion' && k !== 'kind')
    .flatMap(([k, v]) => walk(k, v));
}

/**
 * The flag and feature-gate plan of command lines read from another plane (kubeadm's manifests), at
 * from → to; with `node`, also that plane's kubelet and kube-proxy: the argv from /proc and every
 * field of the config file each reads, checked in the same maps as hardwire's own.
 */
export function planOfCommands(
  commands: Partial<Record<Component, ComponentCommand>>,
  from: string,
  to: string,
  node?: PlaneNode,
): { components: ComponentPlan[]; gates: GatePlan[] } {
  const present = (Object.keys(commands) as Component[]).filter((c) => commands[c]);
  const argvs: Record<string, string[]> = Object.fromEntries(
    present.map((c) => [c, commands[c]!.argv]),
  );
  for (const [c, p] of Object.entries(node?.components ?? {})) argvs[c] = p.argv;
  const names = Object.keys(argvs);
  const passed: Record<string, PassedFlag[]> = Object.fromEntries(
    names.map((c) => [c, [...flagsOf(argvs[c]!)].map(([name, value]) => ({ name, value }))]),
  );
  const fromMaps = Object.fromEntries(names.map((c) => [c, loadFlagMap(c, from)]));
  const toMaps = Object.fromEntries(names.map((c) => [c, loadFlagMap(c, to)]));
  const fields: Record<string, PassedField[]> = Object.fromEntries(
    Object.entries(node?.components ?? {})
      .filter(([, p]) => p.config)
      .map(([c, p]) => [c, fieldsOfConfig(p.config!, fromMaps[c]!)]),
  );
  const versions = Object.fromEntries(
    names.map((c): [string, [string, string]] => [
      c,
      [fromMaps[c]!.componentVersion, toMaps[c]!.componentVersion],
    ]),
  );
  const gates =
    loadGateData(from) && loadGateData(to)
      ? planGates({ from: loadGateData(from)!, to: loadGateData(to)!, passed, versions })
      : [];
  return { components: planUpgrade({ from: fromMaps, to: toMaps, passed, fields }), gates };
}
