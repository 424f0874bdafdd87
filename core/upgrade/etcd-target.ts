// --etcd-to VERSION: the etcd an upgrade plan takes the members to, checked before any hop is
// planned. The default is the target Kubernetes version's etcd in the version table
// (core/components/binaries/catalog.ts: kubeadm's DefaultEtcdVersion at that tag).
import { InputError } from '../../lib/errors.ts';
import { etcdHops, type Hop } from './etcd.ts';

/**
 * The hops from the cluster's etcd to `to`. Throws one InputError on --etcd-to (exit 2): not a
 * version; a downgrade; a hop etcd's rule forbids (a skipped minor); a version, or a hop on the way,
 * that the build table cannot build (`known`: what hardwire builds from core/components/go/etcd*).
 */
export function etcdTarget(from: string, to: string, known: readonly string[]): Hop[] {
  if (!/^v\d+\.\d+\.\d+$/.test(to))
    throw new InputError('--etcd-to', `"${to}" is not an etcd version like v3.7.0`);
  const hops = etcdHops(from, to, '--etcd-to');
  if (!known.includes(to)) {
    throw new InputError(
      '--etcd-to',
      `etcd ${to} is not in the build table (known: ${known.join(', ')}); add it to core/components/binaries/catalog.ts or name a known one`,
    );
  }
  const via = hops.map((h) => h.to).find((v) => !known.includes(v));
  if (via)
    throw new InputError(
      '--etcd-to',
      `etcd ${from} → ${to} must pass through ${via} (${hops.find((h) => h.to === via)!.rules.at(-1)!.cite}), which the build table cannot build (known: ${known.join(', ')})`,
    );
  return hops;
}

/**
 * The etcd versions `upgrade apply` takes every member through, in order, the last `to`: the hops
 * upgrade plan lists for the same --etcd-to (refused as plan refuses them), or `to` alone when the
 * cluster's etcd is `to` already (a re-run still checks each member's files).
 */
export function applyEtcdPath(from: string, to: string, known: readonly string[]): string[] {
  const hops = etcdTarget(from, to, known).map((h) => h.to);
  return hops.length > 0 ? hops : [to];
}
