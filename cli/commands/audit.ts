// hardwire audit: any running cluster, read over SSH and never written (harness/audit).
import { act, topCommand, type Cli, type Run } from '../command.ts';
import { hostOptions, options, type HostOpts, type InventoryOpts } from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { printJson, type Logger } from '../../lib/log.ts';
import type { EtcdMapLookup } from '../../core/upgrade/etcd-flags.ts';
import { writeFileSync } from 'node:fs';
import {
  audit,
  auditPlan,
  formatHtml,
  formatMarkdown,
  formatText,
} from '../../harness/audit/index.ts';
import { formatText as formatPlan } from '../../core/upgrade/format.ts';
import { InputError } from '../../lib/errors.ts';
import { flagVersions } from '../../core/flags/map.ts';
import { loadApiLifecycle } from '../../core/flags/api-lifecycle.ts';
import { etcdMapOnDemand, mapOnDemand, releaseOnDemand } from '../../harness/flags/index.ts';
import { BENCHMARK, kubeBench } from '../../harness/cis/index.ts';

const HELP = `
usage: hardwire audit [--inventory FILE] [--upgrade-to VERSION [--etcd-to VERSION]] [--cis] [--no-regenerate] [--json] [--md FILE] [--html FILE]
                      [--accept-new-host-keys] [--quiet]

Reads a running cluster, whoever made it (hardwire, kubeadm, k0s, a script after Kelsey
Hightower's guide), over SSH: only its hosts and SSH settings are read from the inventory. Each
host's session is read-only: it can run only commands that read (core/transport/read-only.ts).

On each host, from /proc: every etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
kubelet, kube-proxy, containerd and k0s process; its argv; the version its own binary reports
(/proc/<pid>/exe --version); the kubelet's and kube-proxy's --config file as the process sees it.
Every flag and config field is mapped, at that binary's version, to the line that registers it and
the lines that read it (core/flags/data), or reported as unknown; none is dropped. A binary with
no committed map gets one built from its Go modules and kept in ~/.cache/hardwire/flag-maps/, once:
an etcd as "flags --regenerate --etcd" builds one (about 30 s), a Kubernetes release's maps as
"flags --regenerate --kubernetes-version" builds them, with build lists made by go mod tidy (about
20 min cold). --no-regenerate: their flags stay unmapped. A version the Go module proxy does not
serve is one note saying so. Values of flags
named token, password or secret are not repeated. The certificates the flags and fields name are
read (certificate blocks only; nothing named key is read) and checked: expiry, SANs, and which of
the CA files named on the same host signed each.

--upgrade-to VERSION: "hardwire upgrade plan"'s flag-level plan for this cluster, from what runs:
removed and renamed flags, feature gates and config fields (blocking), deprecations and changed
defaults, each cited at both tags; from the kube-apiserver's and etcd's own versions. And the
objects the cluster keeps in APIs VERSION stops serving (its k8s.io/api's APILifecycleRemoved()),
listed at their version through a running kube-controller-manager's own --kubeconfig, by curl on
that host: that identity may list every resource, and its key never leaves the host (no
kube-controller-manager, or no answer: a "partial:" line). Exit 1 when anything blocks.

--cis: also run the real kube-bench (CIS Kubernetes Benchmark, kube-bench's stock profile) on each
host, for the targets what runs there makes (master and controlplane with a kube-apiserver, etcd with
etcd, node with a kubelet), as "hardwire cis" does. It is the one write the audit makes, and only when
asked: kube-bench and its cfg/ go to a temporary directory under /tmp, removed after. Its results
are reported; a FAIL does not change the exit.

A host that cannot be reached, or anything that cannot be read, is one "partial:" line at the end;
the rest of the report still comes out, and the exit is 1. Exit 0: everything was read.
`;

interface Opts extends InventoryOpts, HostOpts {
  json?: boolean;
  upgradeTo?: string;
  etcdTo?: string;
  md?: string;
  html?: string;
  cis?: boolean;
  regenerate: boolean;
}

export function declare(root: Cli): Cli {
  const cmd = topCommand(
    root,
    'audit',
    'read any running cluster over SSH: every flag mapped to the source line that reads it, certificates checked',
    HELP,
  )
    .addOption(options.inventory())
    .addOption(options.stateDir())
    .option('--upgrade-to <version>', 'the upgrade plan to VERSION for this cluster, flag by flag')
    .option(
      '--etcd-to <version>',
      "target etcd version for --upgrade-to (default: the target's etcd in the version table)",
    )
    .option(
      '--cis',
      'also run kube-bench (stock profile) on each host, from a temporary directory it removes',
    )
    .option(
      '--no-regenerate',
      'leave an etcd with no flag map unmapped instead of building its map from its Go modules',
    )
    .addOption(options.md())
    .addOption(options.html())
    .addOption(options.json());
  return hostOptions(cmd, { gates: false }).action(
    act(async ({ opts, log }: Run<Opts>) => {
      if (opts.etcdTo && !opts.upgradeTo)
        throw new InputError('--etcd-to', 'needs --upgrade-to VERSION; add it, or drop --etcd-to');
      if (opts.upgradeTo && !flagVersions().includes(opts.upgradeTo))
        throw new InputError(
          '--upgrade-to',
          `no flag maps for ${opts.upgradeTo} (have: ${flagVersions().join(', ')}); name one of those, or run "hardwire flags --regenerate --kubernetes-version ${opts.upgradeTo}" first`,
        );
      const inv = await inventoryOrLab(opts, log, false);
      const bench = opts.cis ? await kubeBench(inv.cluster.kubernetesVersion, log) : undefined;
      const lifecycle = opts.upgradeTo ? loadApiLifecycle(opts.upgradeTo) : null;
      if (opts.upgradeTo && !lifecycle)
        throw new InputError(
          '--upgrade-to',
          `no core/flags/data/${opts.upgradeTo}/api-lifecycle.json says which APIs it removes; run "hardwire flags --regenerate --kubernetes-version ${opts.upgradeTo}" first`,
        );
      const report = await audit(
        inv,
        {
          acceptNewHostKeys: opts.acceptNewHostKeys === true,
          ...(bench ? { cis: bench.bench } : {}),
          ...(opts.regenerate ? { onDemand: mapOnDemand(log) } : {}),
          ...(opts.upgradeTo && lifecycle ? { apis: { lifecycle, to: opts.upgradeTo } } : {}),
        },
        log,
      );
      if (bench) report.kubeBench = { version: bench.bin.version, benchmark: BENCHMARK };
      if (opts.upgradeTo)
        report.upgrade = auditPlan(
          report,
          opts.upgradeTo,
          opts.etcdTo,
          // A version with only an on-demand map (k0s's etcd 3.6.14): the plan reads it too.
          opts.regenerate ? { etcd: etcdPlanMap(log), release: releaseOnDemand(log) } : undefined,
        );
      if (opts.md) writeFileSync(opts.md, formatMarkdown(report));
      if (opts.html) writeFileSync(opts.html, formatHtml(report));
      if (opts.json) printJson(report);
      else
        process.stdout.write(
          `${formatText(report)}${report.upgrade ? `\n${formatPlan(report.upgrade)}` : ''}`,
        );
      if (report.partial.length > 0) {
        process.stderr.write(
          `error: audit: partial, ${report.partial.length} thing(s) not read; first: ${report.partial[0]}\n`,
        );
        return 1;
      }
      if (report.upgrade && report.upgrade.blocking > 0) {
        process.stderr.write(
          `error: audit: the upgrade to ${opts.upgradeTo} is blocked by ${report.upgrade.blocking} flag(s), gate(s), field(s) or removed API(s) with stored objects; the plan above names each\n`,
        );
        return 1;
      }
      return 0;
    }),
  );
}

/** etcd's map for the plan's hops: committed, else built on demand; a version with neither refuses on --etcd-to. */
function etcdPlanMap(log: Logger): EtcdMapLookup {
  return (version) => {
    const r = etcdMapOnDemand(version, log);
    if ('why' in r) throw new InputError('--etcd-to', r.why);
    return r;
  };
}
