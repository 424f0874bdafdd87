// hardwire upgrade apply: refuses what `upgrade plan` refuses or finds blocking, then rolls the
// cluster to the target (core/upgrade/apply).
import { act, type Cli, type Run } from '../command.ts';
import {
  connection,
  hostOptions,
  options,
  renamed,
  stateDirFrom,
  type HostOpts,
  type InventoryOpts,
} from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { loadValidInventory } from '../../core/validate/inventory.ts';
import type { Inventory } from '../../core/inventory/load.ts';
import { liveText, type PlanDoc } from '../../core/upgrade/format.ts';
import { liveFor, refuseStored } from '../../core/upgrade/live.ts';
import { loadApiLifecycle } from '../../core/flags/api-lifecycle.ts';
import { liveTitle } from '../../core/upgrade/live-format.ts';
import { sourceVersion } from '../../core/upgrade/target.ts';
import { BLOCKING, BLOCKING_FIELD } from '../../core/upgrade/plan.ts';
import { applyEtcdPath } from '../../core/upgrade/etcd-target.ts';
import { upgradeApply } from '../../core/upgrade/apply/run.ts';
import { formatSteps } from '../../core/upgrade/steps.ts';
import { checkExtraArgs } from '../../core/validate/extra-args.ts';
import {
  VERSION_TABLE,
  etcdVersions,
  versionsFor,
} from '../../core/components/binaries/catalog.ts';
import { InputError } from '../../lib/errors.ts';
import { printJson } from '../../lib/log.ts';

export const APPLY_HELP = `
usage: hardwire upgrade apply --to VERSION [--etcd-to VERSION] [--inventory FILE] [--dry-run] [--gate-timeout SECONDS]
                             [--accept-new-host-keys] [--quiet] [--json]

Refuses (exit 2, one line) what "upgrade plan" refuses, and any blocking finding of the plan: a
flag the target's binary no longer registers, a feature gate it removed or locked. Then, before
any write, the plan's live checks, the same code: verify's gates must pass, and no kind VERSION
stops serving may have objects reached through its removed version (exit 2, one line, nothing
changed on any host; --dry-run shows them too). Then: a verified etcd snapshot; each etcd member,
one at a time, through each hop to --etcd-to that upgrade plan lists (default: v3.6.16, then
v3.7.0; an --etcd-to plan refuses is refused here too), each gated on etcd health and the member's
version as etcd reports it; each kube-apiserver, one host at a time (gate /readyz);
kube-controller-manager and kube-scheduler per host (gate: their Leases); containerd, kubelet and
kube-proxy last (wire's gates). Each step backs up what it overwrites; a failed gate restores that
host, restarts it on its old files and stops, naming the gate and its error. What runs is read
from the hosts each time (etcd's member versions, the sha256 of each running executable), so a
re-run does only what is left. --dry-run lists every step with each write and restart and
changes nothing. cluster.kubernetesVersion names the version the inventory was wired at (or
VERSION once the upgrade is done: then apply only finishes what is left).
`;

interface Opts extends InventoryOpts, HostOpts {
  to?: string;
  etcdTo?: string;
  json?: boolean;
  dryRun?: boolean;
}

/** The first blocking finding, as the one line apply refuses with. */
function refuseBlocking(doc: PlanDoc): void {
  for (const p of doc.components) {
    const r = p.rows.find((x) => BLOCKING.includes(x.status));
    if (r)
      throw new InputError(
        `cluster.extraArgs.${p.component}.${r.flag}`,
        `${p.component} ${p.toVersion} registers no --${r.flag} (${r.status}; registered at ${r.from?.registeredAt ?? 'unknown'} in ${p.fromVersion}): remove it from the inventory, then apply`,
      );
    // Config fields come from hardwire's own model, not the inventory: the model must change first.
    const f = p.fields.find((x) => BLOCKING_FIELD.includes(x.status));
    if (f)
      throw new InputError(
        `${p.component}.config.${f.key}`,
        `${f.note} (declared at ${f.from?.registeredAt ?? 'unknown'} in ${doc.from}): core/components/models/${p.component}.ts must stop setting it before apply`,
      );
  }
  for (const g of doc.gates) {
    const r = g.rows.find((x) => x.blocking);
    if (r)
      throw new InputError(
        `cluster.extraArgs.${g.component}.feature-gates`,
        `${r.gate}: ${r.note} (spec at ${r.from?.at ?? 'unknown'}): remove it from the inventory, then apply`,
      );
  }
}

/** The inventory as the target renders it: the one field set to VERSION, its extraArgs checked against the target's flag maps. */
function atTarget(inv: Inventory, to: string): Inventory {
  checkExtraArgs(inv.cluster.extraArgs ?? {}, to);
  const cluster = { ...inv.cluster, kubernetesVersion: to };
  return { ...inv, cluster, doc: { ...inv.doc, cluster } };
}

/** The etcd versions to pass through: the hops from the etcd of `from` (the version table's pairing) to --etcd-to, or to `to`'s etcd. */
function etcdPath(from: string, to: string, etcd: string | undefined): string[] {
  return applyEtcdPath(versionsFor(from).etcd, etcd ?? versionsFor(to).etcd, etcdVersions());
}

const TABLE = VERSION_TABLE.map((r) => r.kubernetes);

export function declareApply(
  upgrade: Cli,
  planFor: (inv: Inventory, to: string, etcd?: string) => PlanDoc,
): void {
  const apply = upgrade
    .command('apply')
    .requiredOption('--to <version>', 'target Kubernetes version, e.g. v1.37.2')
    .option(
      '--etcd-to <version>',
      "target etcd version, as upgrade plan's (default: the target Kubernetes version's etcd in the version table)",
    )
    .addOption(options.inventory())
    .addOption(options.stateDir())
    .addOption(options.dryRun())
    .addOption(options.json());
  renamed(hostOptions(apply, { gates: true }), '--etcd', '--etcd-to', 'version').action(
    act(async ({ opts, log }: Run<Opts>) => {
      const to = opts.to ?? '';
      // Bad input first: the refusals need no host, so they come before the lab and key checks.
      const refuse = (inv: Inventory): string[] => {
        if (inv.cluster.kubernetesVersion !== to) refuseBlocking(planFor(inv, to, opts.etcdTo));
        return etcdPath(sourceVersion(inv.cluster.kubernetesVersion, to, TABLE), to, opts.etcdTo);
      };
      if (opts.inventory !== undefined) refuse(loadValidInventory(opts.inventory));
      const inv = await inventoryOrLab(opts, log, false);
      const path = refuse(inv);
      const from = sourceVersion(inv.cluster.kubernetesVersion, to, TABLE);
      const t0 = performance.now();
      // The plan's live checks, before any write: verify's gates, then objects in APIs the target removes.
      const live = await liveFor(inv, stateDirFrom(opts), loadApiLifecycle(to), from, to, {
        ...connection(opts),
        log,
        who: 'apply',
      });
      refuseStored(live, from, to);
      log.info(liveTitle(live, to));
      const liveMs = Math.round(performance.now() - t0);
      const { ctx, run } = await upgradeApply(
        atTarget(inv, to),
        stateDirFrom(opts),
        { dryRun: opts.dryRun === true, ...connection(opts) },
        path,
        log,
      );
      const totalMs = Math.round(performance.now() - t0);
      if (opts.json) {
        printJson({
          dryRun: ctx.opts.dryRun,
          from: inv.cluster.kubernetesVersion,
          to,
          etcdPath: path,
          runId: ctx.runId,
          live,
          running: Object.fromEntries(run.running),
          steps: run.steps.map((s) => ({
            ...s,
            files: s.files.map((f) => ({ path: f.path, reason: f.reason, sha256: f.sha256 })),
          })),
          done: run.done,
          snapshot: ctx.snapshot ?? null,
          actions: ctx.wet.intents,
          durationsMs: { live: liveMs, ...ctx.durationsMs, total: totalMs },
        });
      } else if (ctx.opts.dryRun) {
        process.stdout.write(`${liveText(live, to).join('\n')}\n\n${formatSteps(run.steps)}`);
      } else {
        log.info(
          `upgraded to ${to} in ${(totalMs / 1000).toFixed(1)}s (${run.done.length} step(s)); set cluster.kubernetesVersion: ${to} in the inventory`,
        );
      }
      return 0;
    }),
  );
}
