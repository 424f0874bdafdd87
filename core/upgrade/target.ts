// Which targets a plan accepts: one minor up from the pin, with a flag map at the target.
// Kubernetes' version-skew policy allows no skipped minor for control-plane components.
import { InputError } from '../../lib/errors.ts';

interface Semver {
  major: number;
  minor: number;
  patch: number;
}

function parse(field: string, v: string): Semver {
  const m = /^v(\d+)\.(\d+)\.(\d+)$/.exec(v);
  if (!m) throw new InputError(field, `"${v}" is not a version like v1.37.2`);
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) };
}

/** Throws one InputError on --to for a downgrade, a skipped minor, or a target with no flag map. */
export function checkTarget(pin: string, to: string, mapped: readonly string[]): void {
  const a = parse('cluster.kubernetesVersion', pin);
  const b = parse('--to', to);
  const cmp = a.major - b.major || a.minor - b.minor || a.patch - b.patch;
  if (cmp > 0)
    throw new InputError(
      '--to',
      `${to} is older than the cluster's ${pin}: a downgrade is not planned`,
    );
  if (cmp === 0)
    throw new InputError('--to', `${to} is the cluster's version already; name a newer one`);
  if (b.major !== a.major || b.minor > a.minor + 1) {
    throw new InputError(
      '--to',
      `${to} skips a minor version from ${pin}; upgrade to v${a.major}.${a.minor + 1}.x first`,
    );
  }
  if (!mapped.includes(to)) {
    throw new InputError(
      '--to',
      `no flag map for ${to} (have: ${mapped.join(', ') || 'none'}); run "hardwire flags --kubernetes-version ${to} --regenerate"`,
    );
  }
  if (!mapped.includes(pin))
    throw new InputError(
      'cluster.kubernetesVersion',
      `no flag map for ${pin} (have: ${mapped.join(', ')})`,
    );
}

/**
 * The version an upgrade to `to` starts from: the inventory's pin, or, once the inventory names
 * `to` already (a resumed run), the version table's release one minor below it.
 */
export function sourceVersion(pin: string, to: string, table: readonly string[]): string {
  if (pin !== to) return pin;
  const minor = (v: string) => Number(v.split('.')[1]);
  return table.find((v) => minor(v) === minor(to) - 1) ?? to;
}
