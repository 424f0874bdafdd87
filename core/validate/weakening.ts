// What an extraArgs override turns off. The rules are the CIS benchmark's own checks on component
// flags (cis-checks.json, from kube-bench's config), plus the few protections hardwire sets that no
// check of kube-bench's reads (HAND_RULES). Pure: the render path states an allowed weakening in the
// flag's reason with the same words (components/models/index.ts).
import { withExtra, type Flag } from '../components/models/types.ts';
import { cisTable, itemsPass } from './cis-checks.ts';

export interface Weakening {
  /** "CIS 1.2.6", or "hardwire" for a hand rule. */
  source: string;
  what: string;
}

type HandRule = (value: string, base: Flag[]) => string | undefined;

const pluginsOf = (base: Flag[]) =>
  (base.find((f) => f.name === 'enable-admission-plugins')?.value ?? '').split(',');

/**
 * Not read by any kube-bench check, or only for presence, so kept here with the reason. Each names
 * what the benchmark misses.
 */
const HAND_RULES: Record<string, Record<string, HandRule>> = {
  'kube-apiserver': {
    // CIS 1.2.14 reads only --enable-admission-plugins; hardwire takes a plugin named here out of it
    // (models/types.ts withExtra), as kube-apiserver refuses one in both lists.
    'disable-admission-plugins': (value, base) => {
      const off = value.split(',').filter((p) => pluginsOf(base).includes(p.trim()));
      return off.length
        ? `it turns off ${off.join(', ')}, which hardwire enables (kubelets may only modify their own Node and Pods)`
        : undefined;
    },
  },
  kubelet: {
    // CIS 4.2.14 asks for true; kube-bench's item checks only that it is set (cis-1.12/node.yaml).
    'seccomp-default': (value) =>
      /^(0|f|false)$/i.test(value)
        ? 'containers without a seccomp profile of their own run Unconfined, not RuntimeDefault (CIS 4.2.14 asks for true; kube-bench checks only that it is set)'
        : undefined,
    // CIS 4.2.13 asks for a limit; kube-bench's item checks only that it is set. -1 is no limit
    // (K pkg/kubelet/cm/pod_container_manager_linux.go:97 sets pids.max only when > 0).
    'pod-max-pids': (value) =>
      Number.parseInt(value, 10) <= 0
        ? 'one Pod may take all the PIDs of the node (CIS 4.2.13 asks for a limit; kube-bench checks only that it is set)'
        : undefined,
  },
};

/**
 * The checks an override fails: each CIS check on this flag that fails with the override applied,
 * unless hardwire's own value already fails it (then the override is no weaker than hardwire). A flag
 * hardwire leaves unset counts as passing: an explicit failing value is the weakening.
 */
export function weakeningsOf(
  component: string,
  flag: string,
  base: Flag[],
  extra: Record<string, string>,
): Weakening[] {
  const own = base.find((f) => f.name === flag);
  const value = own ? withExtra(own, extra) : extra[flag]!;
  const found: Weakening[] = [];
  for (const check of cisTable().checks.filter((c) => c.component === component)) {
    if (itemsPass(check, flag, value) !== false) continue;
    if (own && itemsPass(check, flag, own.value) === false) continue;
    found.push({ source: `CIS ${check.id}`, what: `"${check.text}" fails` });
  }
  const hand = HAND_RULES[component]?.[flag]?.(value, base);
  if (hand) found.push({ source: 'hardwire', what: hand });
  return found;
}

/** One clause for a message or a reason: the first weakening in full, the others by source. */
export function describeWeakenings(w: Weakening[]): string {
  const [first, ...rest] = w;
  const head = first!.source === 'hardwire' ? first!.what : `${first!.source} ${first!.what}`;
  const more = rest.length ? ` (and ${rest.map((r) => r.source).join(', ')})` : '';
  return `${head}${more}`;
}
