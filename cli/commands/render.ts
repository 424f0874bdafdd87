import { act, topCommand, type Cli, type Run } from '../command.ts';
import { options, stateDirFrom, type InventoryOpts } from '../common.ts';
import { inventoryOrLabFile } from '../lab-inventory.ts';
import { ensurePki, clusterStateDir } from '../../core/pki/store.ts';
import { renderHostTree } from '../../core/render/host-tree.ts';
import { writeHostTree } from '../../core/render/write.ts';
import { citer } from '../../core/render/citations.ts';
import { printJson } from '../../lib/log.ts';
import { loadProfile } from '../../core/preflight/profile.ts';

const HELP = `
usage: hardwire render [--inventory FILE] [--state-dir DIR] [--json]

Loads or creates the PKI (as "hardwire pki" does), then writes DIR/<cluster>/hosts/<host>/,
which mirrors exactly what wire puts on that host: /etc/kubernetes/pki/..., the kubeconfigs,
/etc/kubernetes/encryption-config.yaml and /etc/systemd/system/<component>.service. A worker's
units follow what preflight (or wire) last read of it (DIR/<cluster>/preflight/<host>.json: cgroup
version, own kernel or a container); a worker never read is rendered as a lab container, and a
warning says so.
Every flag in a unit comes from core/components/models/ with the reason it is set and, where the
flag map has one, the file:line in Kubernetes source that reads it. Nothing touches a host.
Without --inventory, the local lab's inventory file is used (the lab need not be running).
`;

interface Opts extends InventoryOpts {
  json?: boolean;
}

export function declare(root: Cli): Cli {
  return topCommand(
    root,
    'render',
    'render every file each host needs (PKI, kubeconfigs, systemd units) under the state dir',
    HELP,
  )
    .addOption(options.inventory())
    .addOption(options.stateDir())
    .addOption(options.json())
    .action(
      act(async ({ opts, log }: Run<Opts>) => {
        const inv = await inventoryOrLabFile(opts, log);
        const stateDir = stateDirFrom(opts);
        const pki = await ensurePki(stateDir, inv);
        const cite = await citer(inv.cluster.kubernetesVersion);
        const clusterDir = clusterStateDir(stateDir, inv);
        const writes = inv.hosts.map((h) => {
          const node = loadProfile(clusterDir, h.name);
          if (!node && h.isWorker)
            log.warn(
              `${h.name}: preflight has not read it yet, so its node units assume a lab container (cgroup v1, cgroupfs); "hardwire preflight" reads it`,
            );
          return writeHostTree(clusterDir, renderHostTree(inv, h, pki.dir, cite, node));
        });
        if (opts.json) {
          printJson({ stateDir: clusterDir, pki: pki.events, hosts: writes });
        } else {
          for (const e of pki.events.filter((e) => e.action !== 'kept'))
            log.info(
              `pki ${e.action} ${e.file}${e.reasons.length ? ` (${e.reasons.join('; ')})` : ''}`,
            );
          for (const w of writes) log.info(`${w.host}: ${w.dir} (${w.changed.length} changed)`);
        }
        return 0;
      }),
    );
}
