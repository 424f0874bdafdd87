// `compare --upgrade-to VERSION`: which values are accepted, checked before any lab is brought up or any
// inventory read. The target must be one minor above the cluster's version (upgrade plan's rule,
// core/upgrade/target.ts), in the version table (kubeadm at that version is built from its Go
// module like v1.36.3's), and have flag maps and gate tables for the four control-plane components.
import { InputError } from '../../lib/errors.ts';
import { checkTarget } from '../../core/upgrade/target.ts';
import { VERSION_TABLE } from '../../core/components/binaries/catalog.ts';
import { flagVersions, mappedComponents } from '../../core/flags/map.ts';
import { loadGateData } from '../../core/flags/gates.ts';
import { COMPONENTS } from '../planes/types.ts';

/** Versions with a flag map for each compared component and gate tables. */
function mapped(): string[] {
  return flagVersions().filter(
    (v) =>
      loadGateData(v) !== null &&
      COMPONENTS.every((c) => (mappedComponents(v) as string[]).includes(c)),
  );
}

/**
 * Throws one InputError on --upgrade-to. `pin` is the cluster's Kubernetes version; without it (an
 * inventory not read yet) only what needs no cluster is checked: the form, the table, the maps.
 */
export function checkUpgradeTarget(to: string, pin?: string): void {
  if (!/^v\d+\.\d+\.\d+$/.test(to))
    throw new InputError('--upgrade-to', `"${to}" is not a version like v1.37.2`);
  const table = VERSION_TABLE.map((r) => r.kubernetes);
  if (!table.includes(to))
    throw new InputError(
      '--upgrade-to',
      `${to} is not in the version table (core/components/binaries/catalog.ts: ${table.join(', ')}), so its kubeadm cannot be built; name one of those`,
    );
  const have = mapped();
  if (!have.includes(to))
    throw new InputError(
      '--upgrade-to',
      `no flag map for ${to} (have: ${have.join(', ')}); run "hardwire flags --kubernetes-version ${to} --regenerate"`,
    );
  if (pin === undefined) return;
  try {
    checkTarget(pin, to, have);
  } catch (err) {
    if (err instanceof InputError && err.field === '--to')
      throw new InputError('--upgrade-to', err.message.slice('--to: '.length));
    throw err;
  }
}
