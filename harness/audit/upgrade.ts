// audit --upgrade-to: `upgrade plan`'s flag-level plan (core/upgrade/plan-for.ts planFrom) for a
// cluster hardwire did not make, from the flags and config fields read in /proc rather than
// rendered from an inventory.
import { planFrom, type PlanStart } from '../../core/upgrade/plan-for.ts';
import type { PlanDoc } from '../../core/upgrade/format.ts';
import { versionsFor } from '../../core/components/binaries/catalog.ts';
import { InputError } from '../../lib/errors.ts';
import type { AuditReport } from './types.ts';

/** Per component, each flag and field with its values across hosts joined by " | " (as passedFlags does). */
export function planStart(r: AuditReport): PlanStart {
  const procs = r.hosts.flatMap((h) => h.processes);
  const from = procs.find((p) => p.component === 'kube-apiserver')?.version;
  if (!from)
    throw new InputError(
      '--upgrade-to',
      'no kube-apiserver with a readable version was found on these hosts; audit a control-plane host to plan its upgrade',
    );
  const etcdFrom = procs.find((p) => p.component === 'etcd')?.version ?? versionsFor(from).etcd;
  const collect = (rows: (p: (typeof procs)[number]) => { name: string; value: string }[]) => {
    const out: Record<string, Map<string, Set<string>>> = {};
    for (const p of procs)
      for (const f of rows(p)) {
        const names = (out[p.component] ??= new Map());
        names.set(f.name, (names.get(f.name) ?? new Set()).add(f.value));
      }
    return Object.fromEntries(
      Object.entries(out).map(([c, names]) => [
        c,
        [...names].map(([name, values]) => ({ name, value: [...values].join(' | ') })),
      ]),
    );
  };
  const fields = collect((p) => p.config?.fields ?? []);
  return {
    from,
    etcdFrom,
    passed: collect((p) => p.flags),
    fields: Object.fromEntries(
      Object.entries(fields).map(([c, rows]) => [
        c,
        rows.map(({ name, value }) => ({ key: name, value })),
      ]),
    ),
  };
}

export function auditPlan(r: AuditReport, to: string, etcdTo?: string): PlanDoc {
  return planFrom(planStart(r), to, etcdTo);
}
