import type { Command } from '../command.ts';
import { parse } from '../args.ts';
import { inventoryOptions, requireInventory, stateDirFrom } from '../common.ts';
import { ensurePki, clusterStateDir } from '../../pki/store.ts';
import { renderHostTree } from '../../render/host-tree.ts';
import { writeHostTree } from '../../render/write.ts';
import { citer } from '../../render/citations.ts';
import { printJson } from '../../lib/log.ts';

export const command: Command = {
  name: 'render',
  summary: 'render every file each host needs (PKI, kubeconfigs, systemd units) under the state dir',
  help: `
usage: hardwire render --inventory FILE [--state-dir DIR] [--json]

Loads or creates the PKI (as "hardwire pki" does), then writes DIR/<cluster>/hosts/<host>/,
which mirrors exactly what wire puts on that host: /etc/kubernetes/pki/..., the kubeconfigs,
/etc/kubernetes/encryption-config.yaml and /etc/systemd/system/<component>.service.
Every flag in a unit comes from components/models/ with the reason it is set and, where the
flag map has one, the file:line in Kubernetes source that reads it. Nothing touches a host.
`,
  async run({ argv, log }) {
    const { values } = parse(argv, inventoryOptions, false);
    const inv = requireInventory(values, log);
    const stateDir = stateDirFrom(values);
    const pki = await ensurePki(stateDir, inv);
    const cite = await citer(inv.cluster.kubernetesVersion);
    const writes = inv.hosts.map((h) => writeHostTree(clusterStateDir(stateDir, inv), renderHostTree(inv, h, pki.dir, cite)));
    if (values.json) {
      printJson({ stateDir: clusterStateDir(stateDir, inv), pki: pki.events, hosts: writes });
    } else {
      for (const e of pki.events.filter((e) => e.action !== 'kept')) log.info(`pki ${e.action} ${e.file}${e.reasons.length ? ` (${e.reasons.join('; ')})` : ''}`);
      for (const w of writes) log.info(`${w.host}: ${w.dir} (${w.changed.length} changed)`);
    }
    return 0;
  },
};
