// hardwire upgrade plan: what the target version's binaries say about each flag the units pass.
// Read-only and offline: the committed flag maps at both versions and the rendered unit models.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { act, group, topCommand, type Cli, type Run } from '../command.ts';
import { gateTimeoutMs, options, stateDirFrom, type InventoryOpts } from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { liveFor, type Live } from '../../core/upgrade/live.ts';
import { loadApiLifecycle } from '../../harness/flags/api-lifecycle.ts';
import type { Inventory } from '../../core/inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import { printJson } from '../../lib/log.ts';
import { loadValidInventory } from '../../core/validate/inventory.ts';
import { COMPONENT_NAMES } from '../../core/components/registry/index.ts';
import { flagVersions, isFlagComponent, loadFlagMap, mappedComponents, type FlagMap } from '../../harness/flags/map.ts';
import { checkTarget } from '../../core/upgrade/target.ts';
import { passedFields, passedFlags } from '../../core/upgrade/passed.ts';
import { NO_MAP, planUpgrade } from '../../core/upgrade/plan.ts';
import type { Hop } from '../../core/upgrade/etcd.ts';
import { formatMarkdown, formatText, planDoc, type PlanDoc } from '../../core/upgrade/format.ts';
import { formatHtml } from '../../core/upgrade/html.ts';
import { planGates } from '../../core/upgrade/gates.ts';
import { newAtTarget } from '../../core/upgrade/new.ts';
import { etcdTarget } from '../../core/upgrade/etcd-target.ts';
import { upgradeOrder } from '../../core/upgrade/order.ts';
import { loadGateData } from '../../harness/flags/gates.ts';
import { etcdVersions, versionsFor } from '../../core/components/binaries/catalog.ts';
import { APPLY_HELP, declareApply } from './upgrade-apply.ts';

const HELP = `
usage: hardwire upgrade plan --to VERSION [--etcd VERSION] [--inventory FILE] [--offline] [--gate-timeout S] [--json] [--md FILE] [--html FILE]

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
                 in harness/flags/data/ ("hardwire flags --version VERSION --regenerate")
  --etcd VERSION the etcd the members go to (default: VERSION's etcd in the version table,
                 core/components/binaries/catalog.ts); the hops and the etcd flags and gates are
                 planned for it
  --offline      plan from the flag maps alone; the output says the live checks were skipped
  --gate-timeout S  how long each of verify's gates may take, in seconds, as verify's
  --md FILE      also write the plan as Markdown
  --html FILE    also write the plan as HTML (a table per component)
  --json         one JSON document on stdout
Exit 0 when no passed flag or config field is removed or renamed, no gate is removed or locked
to another value at the target and no removed API holds objects, 1 when one does; 2 for a cluster
that fails verify's gates (or a host SSH cannot reach), for a downgrade, a skipped minor version or a target
without a flag map and gate tables, and on --etcd for a version the build table cannot build, a
downgrade, or a hop etcd's rule forbids (a skipped minor). An --etcd with no etcd flag map
(v3.6.16, a hop-only patch) is planned: its hops and rules are listed, and etcd's rows say
"unmapped" (no flag map at this version) instead of checking its flags and gates there.
${APPLY_HELP}`;

interface Opts extends InventoryOpts { to?: string; etcd?: string; json?: boolean; md?: string; html?: string; offline?: boolean; gateTimeout?: number }

/**
 * The live half, after every offline refusal: verify's gates on the inventory's hosts (exit 2 with
 * one line if one fails), then each kind the target stops serving listed at its removed version.
 */
async function live(opts: Opts, doc: PlanDoc, log: Logger): Promise<Live> {
  if (opts.offline) return { checked: false, skipped: `--offline: verify's gates and the objects stored in APIs ${doc.to} removes were not read; this plan is from the flag maps alone` };
  const inv = await inventoryOrLab(opts, log, false);
  return liveFor(inv, stateDirFrom(opts), loadApiLifecycle(doc.to), doc.from, doc.to, { gateTimeoutMs: gateTimeoutMs(opts), log, who: 'plan' });
}

async function inventoryFor(opts: Opts, log: Logger): Promise<Inventory> {
  let file = opts.inventory;
  if (!file) {
    // Only the lab's inventory file is read: the plan needs no running host.
    const lab = await import('../../harness/lab/index.ts');
    file = (await lab.labStatus({ ...(opts.stateDir ? { stateDir: opts.stateDir } : {}), log })).inventory;
    log.info(`using the local lab's inventory: ${file}`);
  }
  const inv = loadValidInventory(file);
  for (const w of inv.warnings) log.warn(w);
  return inv;
}

/** Versions with a map for every component the plan covers (a half-written regeneration does not count). */
function mappedVersions(components: readonly string[]): string[] {
  return flagVersions().filter((v) => { const have: readonly string[] = mappedComponents(v); return loadGateData(v) !== null && components.every((c) => have.includes(c)); });
}

function mapsAt(version: string, components: readonly string[]): Record<string, FlagMap> {
  return Object.fromEntries(components.map((c) => [c, loadFlagMap(c, version)]));
}

/** Where each target's etcd comes from: kubeadm's DefaultEtcdVersion at that tag. */
const ETCD_PIN: Record<string, string> = {
  'v1.37.2': 'k8s.io/kubernetes@v1.37.2/cmd/kubeadm/app/constants/constants.go:330 DefaultEtcdVersion = "3.7.0-0"',
};

/**
 * The data directory (a Kubernetes version) whose etcd flag map and gate tables are etcd `version`'s,
 * or undefined when no directory maps it: the maps are built per Kubernetes release, each with the
 * etcd it pairs with, so a hop-only patch (v3.6.16) has none.
 */
function etcdData(version: string): string | undefined {
  return flagVersions().find((v) => (mappedComponents(v) as string[]).includes('etcd') && loadFlagMap('etcd', v).componentVersion === version && loadGateData(v) !== null);
}

/** What each hop says about etcd's flags: only the last hop's are checked, and only against a map at its version. */
function hopFlags(hops: Hop[]): (Hop & { flags: string })[] {
  return hops.map((h, i) => {
    const dir = etcdData(h.to);
    const last = i === hops.length - 1;
    if (!dir) return { ...h, flags: `${NO_MAP}: the units' etcd flags are not checked at ${h.to}` };
    return { ...h, flags: last ? `checked in harness/flags/data/${dir}/etcd.json (the etcd table above)` : `mapped in harness/flags/data/${dir}/etcd.json, checked only at the last hop` };
  });
}

/** The plan of `upgrade plan`, and what `upgrade apply` refuses on: refusals (exit 2) thrown here. */
function planFor(inv: Inventory, to: string, etcdTo?: string): PlanDoc {
  const from = inv.cluster.kubernetesVersion;
  const passed = passedFlags(inv);
  // The components this inventory runs that have flag maps (containerd has none): a worker's
  // kubelet needs a map at both versions too.
  const planned = COMPONENT_NAMES.filter((c) => passed[c] && isFlagComponent(c));
  checkTarget(from, to, mappedVersions(planned));
  // etcd's own versions: the version table's pairing now; --etcd, or the table's pairing for the target.
  const etcd = { from: versionsFor(from).etcd, to: etcdTo ?? versionsFor(to).etcd };
  const hops = etcdTarget(etcd.from, etcd.to, etcdVersions());
  // An --etcd with no flag map (v3.6.16) is planned: etcd's rows say so, and its gates are not checked.
  const etcdDir = etcdData(etcd.to);
  const ordered = Object.fromEntries(planned.map((c) => [c, passed[c]!]));
  const only = (keep: (c: string) => boolean) => Object.fromEntries(Object.entries(ordered).filter(([c]) => keep(c)));
  const fromMaps = mapsAt(from, planned);
  const toMaps = { ...mapsAt(to, planned.filter((c) => c !== 'etcd')), ...(planned.includes('etcd') && etcdDir ? { etcd: loadFlagMap('etcd', etcdDir) } : {}) };
  const versions = Object.fromEntries(planned.map((c): [string, [string, string]] => [c, c === 'etcd' ? [etcd.from, etcd.to] : [from, to]]));
  return planDoc({
    from, to,
    components: planUpgrade({ from: fromMaps, to: toMaps, passed: ordered, fields: passedFields(inv), ...(etcdDir ? {} : { unmapped: { etcd: etcd.to } }) }),
    new: newAtTarget(fromMaps, toMaps, ordered),
    // etcd's gate tables are those of the data directory that holds its map at --etcd.
    gates: [
      ...(etcdDir ? planGates({ from: loadGateData(from)!, to: loadGateData(etcdDir)!, passed: only((c) => c === 'etcd'), versions }) : []),
      ...planGates({ from: loadGateData(from)!, to: loadGateData(to)!, passed: only((c) => c !== 'etcd'), versions }),
    ],
    etcd: { ...etcd, toCite: etcd.to === versionsFor(to).etcd && ETCD_PIN[to] ? ETCD_PIN[to] : `--etcd ${etcd.to}`, hops: hopFlags(hops) },
    order: upgradeOrder(planned),
  });
}

export function declare(root: Cli): Cli {
  const upgrade = topCommand(root, 'upgrade', 'plan an upgrade to the next Kubernetes minor version, flag by flag, and apply it host by host', HELP);
  upgrade.command('plan')
    .requiredOption('--to <version>', 'target Kubernetes version, e.g. v1.37.2')
    .option('--etcd <version>', "target etcd version (default: the target Kubernetes version's etcd in the version table)")
    .addOption(options.inventory())
    .addOption(options.stateDir())
    .addOption(options.gateTimeout())
    .option('--offline', "plan from the flag maps alone: skip verify's gates and the stored objects in removed APIs")
    .option('--md <file>', 'also write the plan as Markdown')
    .option('--html <file>', 'also write the plan as HTML')
    .addOption(options.json())
    .addOption(options.quiet())
    .action(act(async ({ opts, log }: Run<Opts>) => {
      const inv = await inventoryFor(opts, log);
      const offline = planFor(inv, opts.to ?? '', opts.etcd);
      const { blocking: _, ...rest } = offline;
      const doc = planDoc({ ...rest, live: await live(opts, offline, log) });
      if (opts.md) writeFileSync(resolve(opts.md), formatMarkdown(doc));
      if (opts.html) writeFileSync(resolve(opts.html), formatHtml(doc));
      if (opts.json) printJson(doc);
      else process.stdout.write(formatText(doc));
      return doc.blocking === 0 ? 0 : 1;
    }));
  declareApply(upgrade, planFor);
  return group(upgrade);
}
