// audit --upgrade-to: `upgrade plan`'s flag-level plan (core/upgrade/plan-for.ts planFrom) for a
// cluster hardwire did not make, from the flags and config fields read in /proc rather than
// rendered from an inventory.
import { planFrom, type PlanOnDemand, type PlanStart } from '../../core/upgrade/plan-for.ts';
import { planDoc, type PlanDoc } from '../../core/upgrade/format.ts';
import { versionsFor } from '../../core/components/binaries/catalog.ts';
import { InputError } from '../../lib/errors.ts';
import type { AuditFlag, AuditReport } from './types.ts';
import { asFields, joinPerHost } from '../../core/upgrade/passed.ts';

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
  const rows = (of: (p: (typeof procs)[number]) => AuditFlag[]) =>
    joinPerHost(
      procs.flatMap((p) =>
        of(p).map((f) => ({ component: p.component, name: f.name, value: f.value })),
      ),
    );
  return {
    from,
    etcdFrom,
    passed: rows((p) => p.flags),
    fields: asFields(rows((p) => p.config?.fields ?? [])),
  };
}

/** The plan, with the objects apis.ts listed as its live section: each kind with objects blocks. */
export function auditPlan(
  r: AuditReport,
  to: string,
  etcdTo?: string,
  onDemand?: PlanOnDemand,
): PlanDoc {
  const doc = planFrom(planStart(r), to, etcdTo, onDemand);
  if (!r.apis) return doc;
  const { server, via, rows } = r.apis;
  return planDoc({ ...doc, live: { checked: true, server, via, apis: rows } });
}
