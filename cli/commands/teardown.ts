import { act, topCommand, type Cli, type Run } from '../command.ts';
import { hostOptions, options, type HostOpts, type InventoryOpts } from '../common.ts';
import { hostContext } from '../lab-inventory.ts';
import { runPhases } from '../../core/apply/phase.ts';
import { connectPhase } from '../../core/apply/phases/connect.ts';
import { teardownPhase } from '../../core/apply/phases/teardown.ts';
import { printJson } from '../../lib/log.ts';
import { stopOrder } from '../help.ts';

const HELP = `
usage: hardwire teardown [--inventory FILE] [--state-dir DIR] [--purge-data] [--dry-run] [--accept-new-host-keys] [--quiet] [--json]

On a worker, first stops the kubelet, kube-proxy and containerd and removes what Pods left
(containers, mounts, the CNI bridge, pod routes, kube-proxy's nftables tables, the kubelet's cgroups
and state). Then, on every host, disables and stops the units it runs, in reverse start order:
  ${stopOrder().join(', ')}
then removes the files listed in each host's /var/lib/hardwire/installed.json. The etcd data
directory (/var/lib/etcd) and the lab registry's storage (/var/lib/registry) are kept unless
--purge-data. The local state dir (PKI) is never touched.
`;

interface Opts extends InventoryOpts, HostOpts {
  json?: boolean;
  purgeData?: boolean;
  dryRun?: boolean;
}

export function declare(root: Cli): Cli {
  const teardown = topCommand(
    root,
    'teardown',
    'stop and remove everything wire put on the hosts (etcd data only with --purge-data)',
    HELP,
  )
    .addOption(options.inventory())
    .addOption(options.stateDir())
    .option('--purge-data', "also remove the etcd data directory and the registry's storage")
    .addOption(options.dryRun());
  return hostOptions(teardown, { gates: false })
    .addOption(options.json())
    .action(
      act(async ({ opts, log }: Run<Opts>) => {
        // Teardown runs no gate; the context still takes a timeout (the default).
        const ctx = await hostContext(opts, log, opts.dryRun === true);
        await runPhases([connectPhase, teardownPhase(opts.purgeData === true)], ctx);
        if (opts.json)
          printJson({
            dryRun: ctx.opts.dryRun,
            actions: ctx.wet.intents,
            durationsMs: ctx.durationsMs,
          });
        else if (ctx.opts.dryRun)
          for (const i of ctx.wet.intents) process.stdout.write(`${i.host}: ${i.msg}\n`);
        return 0;
      }),
    );
}
