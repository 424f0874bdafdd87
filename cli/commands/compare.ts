import { act, topCommand, type Cli, type Run } from '../command.ts';
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
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { printJson } from '../../lib/log.ts';
import { runCompare } from '../../harness/compare/index.ts';
import { markdown, summary } from '../../harness/compare/text.ts';
import { html } from '../../harness/compare/html.ts';
import { BUILT_PLANES, type PlaneName } from '../../harness/planes/plane-names.ts';
import type { Inventory } from '../../core/inventory/load.ts';
import type { YoursOptions } from '../../harness/planes/yours.ts';
import { wholeVerdict } from '../../harness/compare/ttfp-section.ts';
import { InputError, StepError } from '../../lib/errors.ts';
import { checkUpgradeTarget } from '../../harness/compare/upgrade-target.ts';
import { DEFAULT_KUBERNETES } from '../../core/components/binaries/catalog.ts';
import { HARDWIRE_LAB, hardwireLab, hardwireLabDown } from '../../harness/compare/hardwire-lab.ts';

const HELP = `
usage: hardwire compare [--inventory FILE] [--host NAME] [--state-dir DIR] [--json] [--md FILE] [--html FILE]
                        [--allow-partial] [--no-live] [--kubeadm-lab NAME] [--k0s-lab NAME] [--k0s-binary PATH] [--keep-labs]
                        [--upgrade-to VERSION] [--wire] [--plane yours=HOSTS] [--accept-new-host-keys] [--gate-timeout SECONDS] [--quiet]

Collects three control planes built with the same parameters (advertise address, service CIDR,
pod CIDR, cluster name, DNS domain, Kubernetes version) and compares them flag by flag, cert by
cert and process by process. Every value comes from running the tool:
  hardwire  the rendered host tree of --host (default: first etcd+control-plane host) and, when
            its units run, their live command lines from /proc/<pid>/cmdline (--no-live: skip SSH)
  kubeadm   a fresh 2-host lab (--kubeadm-lab, default "compare-kubeadm", recreated each run)
            with containerd, runc, CNI and the kubelet (kubeadm's unit and 10-kubeadm.conf drop-in)
            runs the real "kubeadm init" with every phase; its images are built here under the
            names kubeadm lists, so nothing is pulled. Then /etc/kubernetes/manifests, pki and *.conf,
            the mirror Pods from the API, the kubelet's argv and config, and each static Pod
            container's /proc cmdline (found with crictl ps/inspect), which must equal its manifest;
            node2, prepared while node1 runs "kubeadm init", joins as a worker ("kubeadm join")
            right after it, and a busybox Pod the scheduler puts there runs
  k0s       the real k0s (built from its source archive, see "components build k0s") with its
            default components on a fresh 4-host lab (--k0s-lab, default "compare-k0s"): a single
            controller on node1, and an HA plane on node2-4 (node3 and node4 join with
            "k0s token create --role=controller"). Columns come from node2's /proc; the report
            adds what changes from single to HA, the process tree, and what runs inside k0s.
            The node column: a worker joined with "k0s token create --role=worker" to a
            controller of its own, on a second lab (<k0s-lab>-w, 2 hosts)
  yours     with --plane yours=HOSTS (an inventory: only its hosts and SSH settings are read), a
            running cluster of yours, whoever made it, read as "hardwire audit" reads it: read-only
            sessions, each process in /proc with its binary's own version, the certificate files its
            flags name (never a kubeconfig), each host's process tree, kube-bench (stock profile,
            unless --no-cis: its one write, a temporary directory) and the API endpoint its node's
            kubelet names. No time to first Pod: compare neither builds it nor starts a Pod on it
Flag values are path-normalised (<pki>/, <conf>/, <etcd-data>); raw values stay in the JSON.
"registered at" / "read at" come from the flag map (core/flags/data/<version>/).

Without --inventory, the hardwire plane gets a fresh lab of its own (--hardwire-lab, default
"compare-hardwire", recreated each run): node1 etcd and control plane (no kubelet: hardwire runs the
kubelet and kube-proxy on workers only), node2 its worker; it is wired inside the run, so its time to
first Pod starts at the bare lab, and removed afterwards unless --keep-labs. --wire wires an
--inventory cluster inside the run the same way. A plane that
cannot be collected is reported with the reason, and the command exits 1 unless --allow-partial.
Whole planes: each plane must have a worker Node Ready with the busybox Pod Running on it (hardwire:
its first worker's probe Pod; kubeadm: a worker joined with "kubeadm join"; k0s: its worker);
otherwise one line names the plane and what is missing, exit 1 unless --allow-partial.
Time to first Pod: per plane, from its bare lab (hosts up, nothing installed) to that Pod, with the
phases certs, control plane ready (/readyz ok), node Ready and Pod Running, polled the same way on
every plane (harness/planes/ttfp-watch.ts). hardwire's is measured only when compare wires it.

  --json        the full report as one JSON document on stdout (the summary then goes to stderr)
  --md FILE     Markdown report
  --html FILE   one self-contained HTML file (sortable matrices, differences highlighted)
  --keep-labs   leave the hardwire (without --inventory), kubeadm and k0s lab hosts up for inspection
  --accept-new-host-keys  trust the hardwire plane's unknown host keys on first contact
  --gate-timeout SECONDS  how long each gate of the hardwire plane waits (--wire, CIS)
  --upgrade-to VERSION
                the section "Upgrade to VERSION": that version's kubeadm (built from its Go module) is
                put on the kubeadm host as /usr/bin/kubeadm-VERSION and runs the real "kubeadm upgrade
                plan VERSION" (as text and -o json) against the live kubeadm cluster; hardwire's own
                "upgrade plan --to VERSION" runs for the hardwire plane, and its flag checks for the
                kubeadm manifests' flags. Per component, kubeadm's verdicts beside hardwire's, and
                each of hardwire's findings with what kubeadm's output says about it (often nothing).
                VERSION is checked before anything else: one minor above the cluster's, in the version
                table, with flag maps (exit 2 otherwise)
The inventory's cluster.extraArgs for etcd and the control plane are kubeadm's extraArgs too
(ClusterConfiguration apiServer/controllerManager/scheduler/etcd.local), so both planes pass them.
  --no-cis      skip the CIS section: by default the real kube-bench (CIS 1.12) runs on each live
                plane while it is up (hardwire: every host; kubeadm: stock profile; k0s: the first
                HA controller with harness/cis/k0s/config.yaml), and the report puts the checks side by side
Without --json, stdout carries a readable summary; progress goes to stderr.
`;

interface Opts extends InventoryOpts, HostOpts {
  host?: string;
  json?: boolean;
  md?: string;
  html?: string;
  allowPartial?: boolean;
  live: boolean;
  keepLabs?: boolean;
  hardwireLab: string;
  kubeadmLab: string;
  k0sLab: string;
  k0sBinary?: string;
  cis: boolean;
  upgradeTo?: string;
  wire?: boolean;
  plane?: string;
}

/** --plane yours=FILE: the inventory of a cluster of yours; checked before any lab is brought up. */
function yoursFile(spec: string | undefined, live: boolean): string | undefined {
  if (spec === undefined) return undefined;
  const m = /^yours=(.+)$/.exec(spec);
  if (!m)
    throw new InputError(
      '--plane',
      `takes yours=INVENTORY, an inventory of your cluster's hosts (got "${spec}"); hardwire, kubeadm and k0s are always collected`,
    );
  if (!live)
    throw new InputError('--plane', 'reads a running cluster over SSH; drop --no-live to use it');
  return resolve(m[1]!);
}

/** A lab name for flag, checked as "hardwire lab" checks its --name. */
export async function labName(flag: string, name: string): Promise<string> {
  const { validateLabName } = await import('../../harness/lab/plan.ts');
  try {
    validateLabName(name);
  } catch (err) {
    if (err instanceof InputError)
      throw new InputError(flag, err.message.slice(`${err.field}: `.length));
    throw err;
  }
  return name;
}

export function declare(root: Cli): Cli {
  const compare = topCommand(
    root,
    'compare',
    'hardwire vs real kubeadm vs real k0s at the pinned version: flags, certificates, processes',
    HELP,
  )
    .addOption(options.inventory())
    .option('--host <name>', 'the hardwire host to compare')
    .addOption(options.stateDir())
    .addOption(options.json())
    .addOption(options.md('the report'))
    .addOption(options.html('the report (sortable matrices, differences highlighted)'))
    .option('--allow-partial', 'exit 0 even if a plane could not be collected')
    .option('--no-live', 'skip SSH: compare the rendered tree only')
    .option(
      '--hardwire-lab <name>',
      'lab for the hardwire plane when there is no --inventory',
      HARDWIRE_LAB,
    )
    .option('--kubeadm-lab <name>', 'lab for the kubeadm plane', 'compare-kubeadm')
    .option('--k0s-lab <name>', 'lab for the k0s plane', 'compare-k0s')
    .option('--k0s-binary <path>', 'k0s binary to use')
    .option('--keep-labs', 'leave the kubeadm/k0s lab hosts up')
    .option(
      '--wire',
      "wire the --inventory cluster inside the run (the hardwire plane's time to first Pod)",
    )
    .option('--no-cis', 'skip the CIS section (kube-bench on each plane)')
    .option(
      '--plane <yours=HOSTS>',
      'a fourth plane beside hardwire, kubeadm and k0s: a running cluster of yours, read as hardwire audit reads it (HOSTS: its inventory)',
    )
    .option(
      '--upgrade-to <version>',
      "the upgrade plan to VERSION: kubeadm's real one beside hardwire's",
    );
  return renamed(
    hostOptions(compare, { gates: true }),
    '--upgrade',
    '--upgrade-to',
    'version',
  ).action(
    act(async ({ opts, log }: Run<Opts>) => {
      const ownLab = opts.inventory ? undefined : await labName('--hardwire-lab', opts.hardwireLab);
      const kubeadmLab = await labName('--kubeadm-lab', opts.kubeadmLab);
      const k0sLab = await labName('--k0s-lab', opts.k0sLab);
      const yours = yoursFile(opts.plane, opts.live);
      // Read before any lab is brought up: a bad inventory is exit 2 with nothing started.
      const yoursInv = yours
        ? await inventoryOrLab({ inventory: yours, stateDir: opts.stateDir }, log, false)
        : undefined;
      // Before any lab is brought up or inventory read: with no inventory, against the built-in lab's
      // version; with one, its own version once it is read (which touches no host).
      if (opts.upgradeTo !== undefined)
        checkUpgradeTarget(opts.upgradeTo, opts.inventory ? undefined : DEFAULT_KUBERNETES);
      // No inventory: compare's own hardwire lab (hardwire-lab.ts), fresh, and wired inside the run.
      const inventory = ownLab
        ? await hardwireLab(ownLab, opts.stateDir, log, opts.live)
        : opts.inventory;
      try {
        return await compareOn(
          { ...opts, inventory, ...(ownLab ? { wire: true } : {}) },
          log,
          kubeadmLab,
          k0sLab,
          yoursInv,
        );
      } finally {
        if (ownLab && opts.live && opts.keepLabs !== true)
          await hardwireLabDown(ownLab, opts.stateDir, log);
      }
    }),
  );
}

async function compareOn(
  opts: Opts,
  log: Run<Opts>['log'],
  kubeadmLab: string,
  k0sLab: string,
  yoursInv?: Inventory,
): Promise<number> {
  const inv = await inventoryOrLab(opts, log, false);
  if (opts.upgradeTo !== undefined)
    checkUpgradeTarget(opts.upgradeTo, inv.cluster.kubernetesVersion);
  // compare's own lab, or --wire: wired inside the run, so the hardwire plane's time to first Pod is measured.
  const wireIt =
    opts.wire === true && opts.live
      ? async () => {
          const { wire } = await import('../../core/apply/wire.ts');
          await wire(
            inv,
            stateDirFrom(opts),
            { dryRun: false, verifyHashes: false, ...connection(opts) },
            log,
          );
        }
      : undefined;
  const report = await runCompare({
    inv,
    stateDir: stateDirFrom(opts),
    log,
    live: opts.live,
    ...(opts.host ? { host: opts.host } : {}),
    kubeadmLab,
    k0sLab,
    keepLabs: opts.keepLabs === true,
    cis: opts.cis && opts.live,
    ...connection(opts),
    ...(opts.k0sBinary ? { k0sBinary: resolve(opts.k0sBinary) } : {}),
    ...(opts.upgradeTo ? { upgrade: opts.upgradeTo } : {}),
    ...(wireIt ? { wire: wireIt } : {}),
    ...(yoursInv ? { yours: await yoursOptions(yoursInv, opts, log) } : {}),
  });
  const written: string[] = [];
  const write = (file: string | undefined, text: string) => {
    if (!file) return;
    writeFileSync(file, text);
    written.push(resolve(file));
  };
  write(opts.md, markdown(report));
  write(opts.html, html(report));
  // --json: the document alone on stdout, the summary on stderr (as every command keeps stdout for its one document).
  if (opts.json) {
    printJson(report);
    process.stderr.write(summary(report, written));
  } else {
    process.stdout.write(summary(report, written));
  }
  const asked: PlaneName[] = [...BUILT_PLANES, ...(yoursInv ? (['yours'] as const) : [])];
  const missing = asked.filter((p) => !report.planes[p].collected);
  if (missing.length && opts.allowPartial !== true) {
    throw new StepError(
      'compare',
      `${missing.join(', ')} could not be collected; rerun with --allow-partial to accept a partial report`,
      { detail: missing.map((p) => `${p}: ${report.planes[p].why}`) },
    );
  }
  for (const p of missing) log.warn(`partial report: ${p} not collected: ${report.planes[p].why}`);
  const notWhole = wholeVerdict(report.ttfp);
  if (notWhole && opts.allowPartial !== true)
    throw new StepError('compare', `${notWhole}; rerun with --allow-partial to accept it`);
  if (notWhole) log.warn(`partial report: ${notWhole}`);
  return 0;
}

/** The yours plane's options: audit's on-demand etcd maps, and kube-bench when compare runs CIS. */
async function yoursOptions(
  inv: Inventory,
  opts: Opts,
  log: Run<Opts>['log'],
): Promise<YoursOptions> {
  const { mapOnDemand } = await import('../../harness/flags/index.ts');
  const { kubeBench } = await import('../../harness/cis/index.ts');
  const cis = opts.cis ? await kubeBench(inv.cluster.kubernetesVersion, log) : undefined;
  return {
    inv,
    acceptNewHostKeys: connection(opts).acceptNewHostKeys === true,
    onDemand: mapOnDemand(log),
    ...(cis ? { cis } : {}),
  };
}
