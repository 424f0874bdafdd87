import { existsSync } from 'node:fs';
import { act, topCommand, type Cli, type Run } from '../command.ts';
import { options, stateDirFrom, type InventoryOpts } from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { adminKubeconfigPath } from '../../core/apply/creds.ts';
import { clusterStateDir } from '../../core/pki/store.ts';
import { printJson } from '../../lib/log.ts';
import { StepError } from '../../lib/errors.ts';

const HELP = `
usage: hardwire kubeconfig [--inventory FILE] [--state-dir DIR] [--json]

Prints the absolute path of admin.conf (group kubeadm:cluster-admins). The break-glass
super-admin.conf (system:masters) sits next to it; use it only to repair RBAC.
`;

interface Opts extends InventoryOpts {
  json?: boolean;
}

export function declare(root: Cli): Cli {
  return topCommand(
    root,
    'kubeconfig',
    'print the path of the admin kubeconfig (kubectl --kubeconfig "$(hardwire kubeconfig)")',
    HELP,
  )
    .addOption(options.inventory())
    .addOption(options.stateDir())
    .addOption(options.json())
    .action(
      act(async ({ opts, log }: Run<Opts>) => {
        const inv = await inventoryOrLab(opts, log, false);
        const path = adminKubeconfigPath(clusterStateDir(stateDirFrom(opts), inv));
        if (!existsSync(path))
          throw new StepError(
            'kubeconfig',
            `${path} does not exist yet; run "hardwire wire" first`,
          );
        if (opts.json) printJson({ kubeconfig: path });
        else process.stdout.write(`${path}\n`);
        return 0;
      }),
    );
}
