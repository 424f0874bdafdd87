// The etcd path of an upgrade: the hops from the cluster's etcd (the version table's pairing) to
// the target's (kubeadm's DefaultEtcdVersion at the target tag), each with the rule it obeys.
import { InputError } from '../../lib/errors.ts';

export interface Rule {
  text: string;
  cite: string;
}

export interface Hop {
  from: string;
  to: string;
  rules: Rule[];
}

/** etcd's upgrade policy: one minor at a time, from the newest patch of the current minor. */
const ONE_MINOR: Rule = {
  text: 'Upgrading one minor version at a time (e.g. 3.6 - 3.7). Upgrades that skip a minor version are not supported and will likely fail. Update to the most recent patch version before upgrading to the next minor version.',
  cite: 'https://etcd.io/docs/v3.7/upgrades/upgrading-etcd/ (etcd-io/website@824597935df6e95992ef61c07e3222f4f796ca6c content/en/docs/v3.7/upgrades/upgrading-etcd.md:14)',
};

const PATCH: Rule = {
  text: 'Patch upgrade: Upgrading between patch releases within the same minor version (e.g. 3.7.0 - 3.7.1).',
  cite: ONE_MINOR.cite,
};

/**
 * The lowest patch of the previous minor a member must run before it moves to each minor, and the
 * patch hardwire hops through: the newest the Go module proxy serves (go list -m -versions
 * go.etcd.io/etcd/server/v3 on 2026-12-02: v3.6.16). etcd v3.7.0 itself checks only the minor
 * (api/v3@v3.7.0/version/version.go:28 MinClusterVersion = "3.0.0"; server/v3@v3.7.0/etcdserver/cluster_util.go:174),
 * so nothing stops an older 3.6 member but the guide.
 */
export const MINOR_ENTRY: Readonly<Record<string, { minimum: string; via: string; rule: Rule }>> = {
  '3.7': {
    minimum: 'v3.6.11',
    via: 'v3.6.16',
    rule: {
      text: 'Before upgrading to 3.7, make sure that all of your 3.6 members are updated to 3.6.11 or later. Earlier 3.6 patch releases may not be compatible with a rolling upgrade to 3.7.',
      cite: 'https://etcd.io/docs/v3.7/upgrades/upgrade_3_7/ (etcd-io/website@824597935df6e95992ef61c07e3222f4f796ca6c content/en/docs/v3.7/upgrades/upgrade_3_7.md:19)',
    },
  },
};

function parse(v: string, field = 'etcd'): [number, number, number] {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(v);
  if (!m) throw new InputError(field, `"${v}" is not an etcd version like v3.7.0`);
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}

function cmp(a: string, b: string, field = 'etcd'): number {
  const x = parse(a, field);
  const y = parse(b, field);
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
}

/** The hops from `from` to `to`; [] when they are equal. A downgrade or a skipped minor throws, on `field`. */
export function etcdHops(from: string, to: string, field = 'etcd'): Hop[] {
  const c = cmp(from, to, field);
  if (c === 0) return [];
  if (c > 0)
    throw new InputError(
      field,
      `etcd ${to} is older than the cluster's ${from}: a downgrade is not planned`,
    );
  const [fm, fn] = parse(from, field);
  const [tm, tn] = parse(to, field);
  if (fm === tm && fn === tn) return [{ from, to, rules: [PATCH] }];
  if (fm !== tm || tn !== fn + 1)
    throw new InputError(
      field,
      `etcd ${from} → ${to} skips a minor version; etcd upgrades one minor at a time (${ONE_MINOR.cite})`,
    );
  const entry = MINOR_ENTRY[`${tm}.${tn}`];
  const hops: Hop[] = [];
  let at = from;
  if (entry && cmp(from, entry.minimum) < 0) {
    hops.push({
      from,
      to: entry.via,
      rules: [
        PATCH,
        {
          text: `${entry.minimum} or later before ${tm}.${tn}: ${entry.rule.text}`,
          cite: entry.rule.cite,
        },
      ],
    });
    at = entry.via;
  }
  hops.push({ from: at, to, rules: [ONE_MINOR, ...(entry ? [entry.rule] : [])] });
  return hops;
}
