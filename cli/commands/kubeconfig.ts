import { existsSync } from 'node:fs';
import type { Command } from '../command.ts';
import { parse } from '../args.ts';
import { stateDirFrom } from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { adminKubeconfigPath } from '../../apply/creds.ts';
import { clusterStateDir } from '../../pki/store.ts';
import { printJson } from '../../lib/log.ts';
import { StepError } from '../../lib/errors.ts';

export const command: Command = {
  name: 'kubeconfig',
  summary: 'print the path of the admin kubeconfig (kubectl --kubeconfig "$(hardwire kubeconfig)")',
  help: `
usage: hardwire kubeconfig [--inventory FILE] [--state-dir DIR] [--json]

Prints the absolute path of admin.conf (group kubeadm:cluster-admins). The break-glass
super-admin.conf (system:masters) sits next to it; use it only to repair RBAC.
`,
  async run({ argv, log }) {
    const { values } = parse(argv, { inventory: { type: 'string', short: 'i' }, 'state-dir': { type: 'string' }, json: { type: 'boolean' } }, false);
    const inv = await inventoryOrLab(values, log, false);
    const path = adminKubeconfigPath(clusterStateDir(stateDirFrom(values), inv));
    if (!existsSync(path)) throw new StepError('kubeconfig', `${path} does not exist yet; run "hardwire wire" first`);
    if (values.json) printJson({ kubeconfig: path });
    else process.stdout.write(`${path}\n`);
    return 0;
  },
};
