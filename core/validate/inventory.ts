// The validate step above the registry: what an inventory names is checked against what hardwire
// knows. inventory/ checks the document's structure and its cross-field rules only, so that loading
// an inventory does not load the registry and, through it, the models and the gates.
import { InputError } from '../../lib/errors.ts';
import {
  COMPONENT_NAMES,
  componentsOn,
  specOf,
  type ComponentName,
} from '../components/registry/index.ts';
import { VERSION_TABLE } from '../components/binaries/catalog.ts';
import { loadInventory, type Inventory } from '../inventory/load.ts';
import { checkExtraArgs } from './extra-args.ts';
import { describeWeakenings, weakeningsOf } from './weakening.ts';
import { withExtra } from '../components/models/types.ts';

/** hardwire can only hand out versions it has a row for (components/binaries/catalog.ts versionsFor). */
function checkKubernetesVersion(version: string): void {
  if (VERSION_TABLE.some((r) => r.kubernetes === version)) return;
  throw new InputError(
    'cluster.kubernetesVersion',
    `${version} has no row in hardwire's version table (components/binaries/catalog.ts); use one of ${VERSION_TABLE.map((r) => r.kubernetes).join(', ')}`,
  );
}

/** extraArgs keys are components the registry has. */
function checkComponentNames(extraArgs: Record<string, unknown>): void {
  for (const name of Object.keys(extraArgs)) {
    if (!(COMPONENT_NAMES as readonly string[]).includes(name)) {
      throw new InputError(
        `cluster.extraArgs.${name}`,
        `unknown component; valid names are ${COMPONENT_NAMES.join(', ')}`,
      );
    }
  }
}

/**
 * An extraArgs override that fails a check hardwire's own flags pass is refused unless
 * cluster.allowWeaker names it; an allowWeaker entry must name an override that does.
 */
function checkWeakening(inv: Inventory): void {
  const { extraArgs, allowWeaker } = inv.cluster;
  allowWeaker.forEach((entry, i) => {
    const [c, f] = [entry.slice(0, entry.indexOf('.')), entry.slice(entry.indexOf('.') + 1)];
    if (extraArgs[c]?.[f] === undefined)
      throw new InputError(
        `cluster.allowWeaker[${i}]`,
        `"${entry}" names no override: cluster.extraArgs.${c}.${f} is not set; remove it from cluster.allowWeaker`,
      );
  });
  for (const [c, flags] of Object.entries(extraArgs)) {
    // hardwire's own flags for it, from a host that runs it (the flags a check reads do not vary by
    // host). With no such host its model cannot be built; every flag then counts as unset.
    const host = inv.hosts.find((h) => componentsOn(h).includes(c as ComponentName));
    const base = host ? specOf(c as ComponentName).model({ inv, host }).flags : [];
    for (const [f, value] of Object.entries(flags ?? {})) {
      const w = weakeningsOf(c, f, base, flags!);
      const allowed = allowWeaker.indexOf(`${c}.${f}`);
      const own = base.find((x) => x.name === f);
      if (w.length && allowed < 0)
        throw new InputError(
          `cluster.extraArgs.${c}.${f}`,
          `--${f}=${own ? withExtra(own, flags!) : value} weakens the cluster${own ? ` (hardwire sets ${own.value})` : ''}: ${describeWeakenings(w)}; remove it, or add "${c}.${f}" to cluster.allowWeaker to go on`,
        );
      if (!w.length && allowed >= 0)
        throw new InputError(
          `cluster.allowWeaker[${allowed}]`,
          `cluster.extraArgs.${c}.${f} weakens no check hardwire knows; remove "${c}.${f}" from cluster.allowWeaker`,
        );
    }
  }
}

/** The Kubernetes version, the extraArgs components, and each extraArgs flag and value. */
export function validateInventory(inv: Inventory): Inventory {
  const c = inv.cluster;
  checkKubernetesVersion(c.kubernetesVersion);
  checkComponentNames(c.extraArgs);
  checkExtraArgs(c.extraArgs, c.kubernetesVersion);
  checkWeakening(inv);
  return inv;
}

/** loadInventory, then validateInventory: what every command that acts on an inventory uses. */
export function loadValidInventory(file: string): Inventory {
  return validateInventory(loadInventory(file));
}
