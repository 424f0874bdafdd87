// The validate step above the registry: what an inventory names is checked against what hardwire
// knows. inventory/ checks the document's structure and its cross-field rules only, so that loading
// an inventory does not load the registry and, through it, the models and the gates.
import { InputError } from '../../lib/errors.ts';
import { COMPONENT_NAMES } from '../components/registry/index.ts';
import { VERSION_TABLE } from '../components/binaries/catalog.ts';
import { loadInventory, type Inventory } from '../inventory/load.ts';
import { checkExtraArgs } from './extra-args.ts';

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

/** The Kubernetes version, the extraArgs components, and each extraArgs flag and value. */
export function validateInventory(inv: Inventory): Inventory {
  const c = inv.cluster;
  checkKubernetesVersion(c.kubernetesVersion);
  checkComponentNames(c.extraArgs);
  checkExtraArgs(c.extraArgs, c.kubernetesVersion);
  return inv;
}

/** loadInventory, then validateInventory: what every command that acts on an inventory uses. */
export function loadValidInventory(file: string): Inventory {
  return validateInventory(loadInventory(file));
}
