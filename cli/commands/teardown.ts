import type { Command } from '../command.ts';
import { parse } from '../args.ts';
import { stateDirFrom } from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { newContext } from '../../apply/context.ts';
import { runPhases } from '../../apply/phase.ts';
import { connectPhase } from '../../apply/phases/connect.ts';
import { teardownPhase } from '../../apply/phases/teardown.ts';
import { clusterStateDir } from '../../pki/store.ts';
import { printJson } from '../../lib/log.ts';

export const command: Command = {
  name: 'teardown',
  summary: 'stop and remove everything wire put on the hosts (etcd data only with --purge-data)',
  help: `
usage: hardwire teardown [--inventory FILE] [--state-dir DIR] [--purge-data] [--dry-run] [--json]

Disables and stops the units (scheduler, controller-manager, apiserver, etcd), then removes the
files listed in each host's /var/lib/hardwire/installed.json. The etcd data directory
(/var/lib/etcd) is kept unless --purge-data. The local state dir (PKI) is never touched.
`,
  async run({ argv, log }) {
    const { values } = parse(argv, { inventory: { type: 'string', short: 'i' }, 'state-dir': { type: 'string' }, json: { type: 'boolean' }, 'purge-data': { type: 'boolean' }, 'dry-run': { type: 'boolean' } }, false);
    const inv = await inventoryOrLab(values, log, false);
    const stateDir = stateDirFrom(values);
    const ctx = newContext(inv, stateDir, clusterStateDir(stateDir, inv), { dryRun: values['dry-run'] === true, acceptNewHostKeys: false, gateTimeoutMs: 60_000 }, log);
    await runPhases([connectPhase, teardownPhase(values['purge-data'] === true)], ctx);
    if (values.json) printJson({ dryRun: ctx.opts.dryRun, actions: ctx.wet.intents, durationsMs: ctx.durationsMs });
    else if (ctx.opts.dryRun) for (const i of ctx.wet.intents) process.stdout.write(`${i.host}: ${i.msg}\n`);
    return 0;
  },
};
