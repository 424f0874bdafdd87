// compare's "Upgrade to <version>" section, pure: kubeadm's real `upgrade plan` output beside
// hardwire's flag-level plan, per component, and each of hardwire's findings (a flag, config field
// or feature gate that is not unchanged at the target) with what kubeadm's output says about it.
// "Says" is literal: the finding's name appears in a line kubeadm printed (text, stderr or JSON).
import type { PlanDoc } from '../../core/upgrade/format.ts';
import { UPGRADE_GROUPS } from '../../core/components/registry/index.ts';
import type { ComponentPlan } from '../../core/upgrade/plan.ts';
import type { GatePlan } from '../../core/upgrade/gates.ts';
import type { KubeadmUpgradePlan } from '../planes/upgrade-types.ts';

export type FindingKind = 'flag' | 'config field' | 'feature gate';

export interface Finding {
  /** Whose command lines: hardwire's units, or the kubeadm plane's manifests. */
  plane: 'hardwire' | 'kubeadm';
  component: string;
  kind: FindingKind;
  /** `--flag`, a config field's json path, or a gate's name. */
  name: string;
  status: string;
  blocking: boolean;
  from: string | null;
  to: string | null;
  note: string;
  /** The first line of kubeadm's output that names it, or null: kubeadm says nothing about it. */
  kubeadmSays: string | null;
}

export interface ComponentVerdicts {
  component: string;
  /** What kubeadm's plan says of this component: each upgrade it lists, and its config API state. */
  kubeadm: string[];
  /** hardwire's verdicts for its own plane, and for the flags the kubeadm plane's manifests pass. */
  hardwire: string;
  kubeadmFlags: string;
}

export interface FlagsPlan {
  components: ComponentPlan[];
  gates: GatePlan[];
}

export interface UpgradeSection {
  from: string;
  to: string;
  /** The real `kubeadm upgrade plan` runs, or why there are none. */
  kubeadm: KubeadmUpgradePlan | { none: string };
  hardwire: PlanDoc | { none: string };
  kubeadmFlags: FlagsPlan | { none: string };
  components: ComponentVerdicts[];
  findings: Finding[];
  /** Findings whose name kubeadm's output never mentions. */
  silent: number;
  /** Why kubeadm cannot know: it checks an extraArg's name only for being non-empty. */
  unchecked: string;
}

/** Rows in upgrade order: the registry's components, then what only kubeadm's plan lists. */
const ORDER = [...UPGRADE_GROUPS.flatMap((g) => g.components), 'CoreDNS', 'kubeadm'];
/** kubeadm's component config groups (its `configVersions`), by the component that reads them. */
const CONFIG_GROUP: Record<string, string> = {
  'kubelet.config.k8s.io': 'kubelet',
  'kubeproxy.config.k8s.io': 'kube-proxy',
};

export function uncheckedSentence(to: string): string {
  return `kubeadm passes extraArgs through unchecked: its validation of an extraArg is only that the name is not empty and the merge method known (k8s.io/kubernetes@${to}/cmd/kubeadm/app/apis/kubeadm/validation/validation.go:735), and upgrade apply regenerates each manifest from its defaults plus those args, so a flag the new binary removed crash-loops the component (kubernetes/kubernetes#100988)`;
}

/** Every line kubeadm printed, in the order it printed them. */
function kubeadmLines(k: KubeadmUpgradePlan): string[] {
  return [k.text.stdout, k.text.stderr, k.json.stdout, k.json.stderr]
    .join('\n')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

/** The first line naming `name` as a whole word (not a part of a longer flag, field or gate name). */
export function lineNaming(lines: string[], name: string): string | null {
  const bare = name.replace(/^--/, '');
  const esc = bare.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const re = new RegExp(`(^|[^\\w.-])${esc}(?![\\w-])`);
  return lines.find((l) => re.test(l)) ?? null;
}

function findingsOf(
  plane: Finding['plane'],
  components: ComponentPlan[],
  gates: GatePlan[],
  lines: string[],
): Finding[] {
  const out: Omit<Finding, 'kubeadmSays'>[] = [];
  for (const p of components) {
    for (const r of p.rows.filter((x) => x.status !== 'unchanged')) {
      out.push({
        plane,
        component: p.component,
        kind: 'flag',
        name: `--${r.flag}`,
        status: r.status,
        blocking: r.status === 'removed' || r.status === 'renamed',
        from: r.from?.registeredAt ?? null,
        to: r.to?.registeredAt ?? r.renamedTo?.registeredAt ?? null,
        note: r.note,
      });
    }
    for (const f of p.fields.filter((x) => x.status !== 'unchanged')) {
      out.push({
        plane,
        component: p.component,
        kind: 'config field',
        name: f.key,
        status: f.status,
        blocking: true,
        from: f.from?.registeredAt ?? null,
        to: f.to?.registeredAt ?? f.renamedTo?.registeredAt ?? null,
        note: f.note,
      });
    }
  }
  for (const g of gates) {
    for (const r of g.rows.filter((x) => x.status !== 'unchanged')) {
      out.push({
        plane,
        component: g.component,
        kind: 'feature gate',
        name: r.gate,
        status: r.status,
        blocking: r.blocking,
        from: r.from?.at ?? null,
        to: r.to?.at ?? null,
        note: r.note,
      });
    }
  }
  return out.map((f) => ({ ...f, kubeadmSays: lineNaming(lines, f.name) }));
}

function counts(component: string, components: ComponentPlan[], gates: GatePlan[]): string {
  const p = components.find((x) => x.component === component);
  if (!p) return '';
  const tally = (statuses: string[]) => {
    const n = new Map<string, number>();
    for (const s of statuses) n.set(s, (n.get(s) ?? 0) + 1);
    return [...n].map(([s, k]) => `${k} ${s}`).join(', ');
  };
  const g = gates.find((x) => x.component === component)?.rows ?? [];
  const parts = [
    `${p.rows.length} flags (${tally(p.rows.map((r) => r.status)) || 'none'}) ${p.fromVersion} → ${p.toVersion}`,
  ];
  if (p.fields.length)
    parts.push(`${p.fields.length} config fields (${tally(p.fields.map((r) => r.status))})`);
  if (g.length) parts.push(`${g.length} feature gates (${tally(g.map((r) => r.status))})`);
  return parts.join('; ');
}

/** hardwire's etcd path, hop by hop (etcd's rule: the newest patch of a minor before the next minor). */
function hopsOf(hw: PlanDoc): string {
  return hw.etcd.hops.length
    ? `etcd hops ${[hw.etcd.from, ...hw.etcd.hops.map((h) => h.to)].join(' → ')}`
    : '';
}

function kubeadmSaysOf(component: string, k: KubeadmUpgradePlan): string[] {
  const plan = k.json.plan;
  if (!plan) return [];
  const out: string[] = [];
  for (const u of plan.availableUpgrades ?? []) {
    for (const c of u.components.filter((x) => x.name === component)) {
      out.push(
        `${c.nodeName ? `${c.nodeName}: ` : ''}${c.currentVersion || '(none)'} → ${c.newVersion || '(none)'}${component === 'kubelet' ? ' (upgraded manually after the control plane)' : ''} [${u.description}]`,
      );
    }
  }
  for (const v of plan.configVersions ?? []) {
    if (CONFIG_GROUP[v.group] === component)
      out.push(
        `config ${v.group} ${v.currentVersion || '-'} (preferred ${v.preferredVersion || '-'}), manual upgrade required: ${v.manualUpgradeRequired ? 'yes' : 'no'}`,
      );
  }
  return out;
}

export function buildUpgradeSection(input: {
  from: string;
  to: string;
  kubeadm: UpgradeSection['kubeadm'];
  hardwire: UpgradeSection['hardwire'];
  kubeadmFlags: UpgradeSection['kubeadmFlags'];
}): UpgradeSection {
  const k = 'none' in input.kubeadm ? null : input.kubeadm;
  const lines = k ? kubeadmLines(k) : [];
  const hw = 'none' in input.hardwire ? null : input.hardwire;
  const kf = 'none' in input.kubeadmFlags ? null : input.kubeadmFlags;
  // Without kubeadm's output there is nothing it said or left unsaid: no findings are compared.
  const findings = k
    ? [
        ...(hw ? findingsOf('hardwire', hw.components, hw.gates, lines) : []),
        ...(kf ? findingsOf('kubeadm', kf.components, kf.gates, lines) : []),
      ]
    : [];
  const named = new Set([
    ...(k?.json.plan?.availableUpgrades ?? []).flatMap((u) => u.components.map((c) => c.name)),
    ...(k?.json.plan?.configVersions ?? [])
      .map((v) => CONFIG_GROUP[v.group])
      .filter((c): c is string => Boolean(c)),
    ...(hw?.components ?? []).map((p) => p.component),
    ...(kf?.components ?? []).map((p) => p.component),
  ]);
  const rank = (c: string) => (ORDER.includes(c) ? ORDER.indexOf(c) : ORDER.length);
  const components = [...named]
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
    .map(
      (c): ComponentVerdicts => ({
        component: c,
        kubeadm: k ? kubeadmSaysOf(c, k) : [],
        hardwire: hw
          ? [counts(c, hw.components, hw.gates), c === 'etcd' ? hopsOf(hw) : '']
              .filter(Boolean)
              .join('; ')
          : '',
        kubeadmFlags: kf ? counts(c, kf.components, kf.gates) : '',
      }),
    );
  return {
    ...input,
    components,
    findings,
    silent: findings.filter((f) => f.kubeadmSays === null).length,
    unchecked: uncheckedSentence(input.to),
  };
}
