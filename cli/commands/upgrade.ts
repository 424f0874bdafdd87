// hardwire upgrade plan: what the target version's binaries say about each flag the units pass.
// Read-only and offline: the committed flag maps at both versions and the rendered unit models.
import { writeFileSync } from 'node:fs';
import { act, group, topCommand, type Cli, type Run } from '../command.ts';
import {
  connection,
  hostOptions,
  options,
  renamed,
  stateDirFrom,
  type HostOpts,
  type InventoryOpts,
} from '../common.ts';
import { inventoryOrLab, inventoryOrLabFile } from '../lab-inventory.ts';
import { liveFor, type Live } from '../../core/upgrade/live.ts';
import { loadApiLifecycle } from '../../core/flags/api-lifecycle.ts';
import type { Logger } from '../../lib/log.ts';
import { printJson } from '../../lib/log.ts';
import { formatMarkdown, formatText, planDoc, type PlanDoc } from '../../core/upgrade/format.ts';
import { formatHtml } from '../../core/upgrade/html.ts';
import { APPLY_HELP, declareApply } from './upgrade-apply.ts';
import { planFor } from '../../core/upgrade/plan-for.ts';

const HELP = `
usage: hardwire upgrade plan --to VERSION [--etcd-to VERSION] [--inventory FILE] [--offline] [--gate-timeout S] [--accept-new-host-keys]
                            [--json] [--md FILE] [--html FILE] [--quiet]

For each component, every flag its unit passes (the unit model rendered for the inventory,
cluster.extraArgs included; no --inventory means the local lab's) is looked up in that binary's
own flag set in the flag map at the cluster's version and at VERSION, and reported as unchanged,
default-changed, deprecated, renamed (a new flag binds the same Go field) or removed, with the
registration cited at both tags (module@version/file:line). Each field the rendered kubelet and
kube-proxy config files set (the models' fields, by json path) is looked up in that binary's config
type in the map's config section at both versions, and reported as unchanged, default-changed
(SetDefaults_<Type>'s assignment, else the doc's "Default:" line, cited at both tags), deprecated
(its "Deprecated:" doc line), renamed or removed, its json-tagged line cited at both tags; then one
line lists the fields the file leaves unset whose default changes (neither is blocking).
Each gate in a unit's --feature-gates
is looked up in the gate tables that binary registers (flags/data/<v>/feature-gates.json) and
reported as unchanged, default-changed, locked or removed, the spec cited at both tags. Then, not
blocking, what each binary the inventory runs has at VERSION and not at the cluster's version (flags
and config fields), "recommended" only where a flag of that binary is deprecated with a message
naming the new one (--NAME). Then the
etcd hops, each with etcd's rule, and the component order, each with the version-skew rule.
Then, live (read-only, over SSH and with admin.conf): verify's gates (not its smoke test, which
writes) must pass, else exit 2 with one line naming the failing gate and host; then every kind
VERSION stops serving (APILifecycleRemoved() in k8s.io/api at VERSION, flags/data/<v>/api-lifecycle.json)
is listed at its removed group/version, and a kind with objects blocks. Nothing changes on a host.

  --to VERSION   the target Kubernetes version: one minor above the cluster's, with a flag map
                 in core/flags/data/ ("hardwire flags --kubernetes-version VERSION --regenerate")
  --etcd-to VERSION
                 the etcd the members go to (default: VERSION's etcd in the version table,
                 core/components/binaries/catalog.ts); the hops, one etcd flag table per hop
                 (each checked in etcd's map at both ends of that hop) and the etcd gates are
                 planned for it
  --offline      plan from the flag maps alone; the output says the live checks were skipped
  --gate-timeout S  how long each of verify's gates may take, in seconds, as verify's
  --accept-new-host-keys  trust unknown host keys on first contact (the live checks)
  --md FILE      also write the plan as Markdown
  --html FILE    also write the plan as HTML (a table per component)
  --json         one JSON document on stdout
Exit 0 when no passed flag or config field is removed or renamed, no gate is removed or locked
to another value at the target and no removed API holds objects, 1 when one does; 2 for a cluster
that fails verify's gates (or a host SSH cannot reach), for a downgrade, a skipped minor version or a target
without a flag map and gate tables, and on --etcd-to for a version the build table cannot build, a
downgrade, a hop etcd's rule forbids (a skipped minor), or a hop whose etcd has no flag map
(core/flags/data/<kubernetes>/etcd.json, or data/etcd/<etcd>.json for a hop-only patch such as
v3.6.16: "hardwire flags --regenerate --etcd VERSION"). etcd's feature gates are checked at each
hop too, in etcd's gate table at both ends (a release's feature-gates.json, or data/etcd/<etcd>.feature-gates.json).
${APPLY_HELP}`;

interface Opts extends InventoryOpts, HostOpts {
  to?: string;
  etcdTo?: string;
  json?: boolean;
  md?: string;
  html?: string;
  offline?: boolean;
}

/**
 * The live half, after every offline refusal: verify's gates on the inventory's hosts (exit 2 with
 * one line if one fails), then each kind the target stops serving listed at its removed version.
 */
async function live(opts: Opts, doc: PlanDoc, log: Logger): Promise<Live> {
  if (opts.offline)
    return {
      checked: false,
      skipped: `--offline: verify's gates and the objects stored in APIs ${doc.to} removes were not read; this plan is from the flag maps alone`,
    };
  const inv = await inventoryOrLab(opts, log, false);
  return liveFor(inv, stateDirFrom(opts), loadApiLifecycle(doc.to), doc.from, doc.to, {
    ...connection(opts),
    log,
    who: 'plan',
  });
}

export function declare(root: Cli): Cli {
  const upgrade = topCommand(
    root,
    'upgrade',
    'plan an upgrade to the next Kubernetes minor version, flag by flag, and apply it host by host',
    HELP,
  );
  const plan = upgrade
    .command('plan')
    .requiredOption('--to <version>', 'target Kubernetes version, e.g. v1.37.2')
    .option(
      '--etcd-to <version>',
      "target etcd version (default: the target Kubernetes version's etcd in the version table)",
    )
    .addOption(options.inventory())
    .addOption(options.stateDir())
    .option(
      '--offline',
      "plan from the flag maps alone: skip verify's gates and the stored objects in removed APIs",
    )
    .addOption(options.md('the plan'))
    .addOption(options.html('the plan (a table per component)'))
    .addOption(options.json());
  renamed(hostOptions(plan, { gates: true }), '--etcd', '--etcd-to', 'version').action(
    act(async ({ opts, log }: Run<Opts>) => {
      // Only the inventory file is read here (the lab's without --inventory): the offline plan needs no running host.
      const inv = await inventoryOrLabFile(opts, log);
      const offline = planFor(inv, opts.to ?? '', opts.etcdTo);
      const { blocking: _, ...rest } = offline;
      const doc = planDoc({ ...rest, live: await live(opts, offline, log) });
      if (opts.md) writeFileSync(opts.md, formatMarkdown(doc));
      if (opts.html) writeFileSync(opts.html, formatHtml(doc));
      if (opts.json) printJson(doc);
      else process.stdout.write(formatText(doc));
      return doc.blocking === 0 ? 0 : 1;
    }),
  );
  declareApply(upgrade, planFor);
  return group(upgrade);
}
