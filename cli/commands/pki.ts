import { act, topCommand, type Cli, type Run } from '../command.ts';
import { options, stateDirFrom, type InventoryOpts } from '../common.ts';
import { inventoryOrLabFile } from '../lab-inventory.ts';
import { ensurePki } from '../../core/pki/store.ts';
import { allLeaves } from '../../core/pki/table.ts';
import { printJson } from '../../lib/log.ts';
import { InputError } from '../../lib/errors.ts';
import { certIds, wrapList } from '../help.ts';

const HELP = () => `
usage: hardwire pki [<cert-id>...] [--inventory FILE] [--state-dir DIR] [--json]

Writes the operator copy under DIR/<cluster>/pki (default .hardwire/). Re-running is safe:
a CA is never regenerated, a leaf is kept while it still fits the inventory, otherwise it is
reissued and the reason is printed. Key files are 0600 and never printed.

With <cert-id>, only those leaves are checked (like "kubeadm init phase certs apiserver");
CAs are always loaded or created first. Ids (those of hosts' roles the inventory has; from the
certificate table, core/pki/table.ts):
  ${wrapList(certIds(), '  ')}
Without --inventory, the local lab's inventory file is used (the lab need not be running).
`;

interface Opts extends InventoryOpts {
  json?: boolean;
}

export function declare(root: Cli): Cli {
  return topCommand(
    root,
    'pki',
    'load or create the cluster, etcd and front-proxy CAs, every leaf cert, kubeconfig and the encryption config',
    HELP,
  )
    .argument('[cert-id...]')
    .addOption(options.inventory())
    .addOption(options.stateDir())
    .addOption(options.json())
    .action(
      act(async ({ opts, log }: Run<Opts>, ids: string[]) => {
        const inv = await inventoryOrLabFile(opts, log);
        const known = new Set<string>(allLeaves(inv).map((l) => l.id));
        for (const p of ids)
          if (!known.has(p))
            throw new InputError(
              'cert-id',
              `unknown certificate "${p}"; valid: ${[...known].join(', ')}`,
            );
        const only = ids.length ? (s: { id: string }) => ids.includes(s.id) : undefined;
        const result = await ensurePki(stateDirFrom(opts), inv, only);
        if (opts.json) {
          printJson({ dir: result.dir, events: result.events });
        } else {
          for (const e of result.events)
            log.info(
              `${e.action.padEnd(8)} ${e.file}${e.reasons.length ? `  (${e.reasons.join('; ')})` : ''}`,
            );
          log.info(`pki: ${result.dir}`);
        }
        return 0;
      }),
    );
}
