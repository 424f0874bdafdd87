// hardwire audit: any running cluster, read over SSH and never written (harness/audit).
import { act, topCommand, type Cli, type Run } from '../command.ts';
import { hostOptions, options, type HostOpts, type InventoryOpts } from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { printJson } from '../../lib/log.ts';
import { audit, formatText } from '../../harness/audit/index.ts';

const HELP = `
usage: hardwire audit [--inventory FILE] [--json] [--accept-new-host-keys] [--quiet]

Reads a running cluster, whoever made it (hardwire, kubeadm, k0s, a script after Kelsey
Hightower's guide), over SSH: only its hosts and SSH settings are read from the inventory. Each
host's session is read-only: it can run only commands that read (core/transport/read-only.ts).

On each host, from /proc: every etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
kubelet, kube-proxy, containerd and k0s process; its argv; the version its own binary reports
(/proc/<pid>/exe --version); the kubelet's and kube-proxy's --config file as the process sees it.
Every flag and config field is mapped, at that binary's version, to the line that registers it and
the lines that read it (core/flags/data), or reported as unknown; none is dropped. Values of flags
named token, password or secret are not repeated. The certificates the flags and fields name are
read (certificate blocks only; nothing named key is read) and checked: expiry, SANs, and which of
the CA files named on the same host signed each.

A host that cannot be reached, or anything that cannot be read, is one "partial:" line at the end;
the rest of the report still comes out, and the exit is 1. Exit 0: everything was read.
`;

interface Opts extends InventoryOpts, HostOpts {
  json?: boolean;
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
    .addOption(options.json());
  return hostOptions(cmd, { gates: false }).action(
    act(async ({ opts, log }: Run<Opts>) => {
      const inv = await inventoryOrLab(opts, log, false);
      const report = await audit(inv, { acceptNewHostKeys: opts.acceptNewHostKeys === true }, log);
      if (opts.json) printJson(report);
      else process.stdout.write(formatText(report));
      if (report.partial.length === 0) return 0;
      process.stderr.write(
        `error: audit: partial, ${report.partial.length} thing(s) not read; first: ${report.partial[0]}\n`,
      );
      return 1;
    }),
  );
}
