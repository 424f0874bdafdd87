import type { Command } from '../command.ts';
import { parse } from '../args.ts';
import { stateDirFrom } from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { newContext } from '../../apply/context.ts';
import { runPhases } from '../../apply/phase.ts';
import { connectPhase } from '../../apply/phases/connect.ts';
import { rollbackPhase } from '../../apply/phases/rollback.ts';
import { START_PHASES } from '../../apply/phases/start.ts';
import { clusterStateDir } from '../../pki/store.ts';
import { printJson } from '../../lib/log.ts';
import { InputError } from '../../lib/errors.ts';
import { BACKUP_ROOT } from '../../apply/backup.ts';

export const command: Command = {
  name: 'rollback',
  summary: 'undo a wire run on the hosts from its on-host backups, then restart what it touched (gated)',
  help: `
usage: hardwire rollback <run-id> [--inventory FILE] [--state-dir DIR] [--dry-run] [--json]
       hardwire rollback --list [--inventory FILE]

Every wire run that changes a host first copies the files it will overwrite to
${BACKUP_ROOT}/<run-id>/ on that host (the newest 5 runs are kept) and records the files it
creates. rollback restores them atomically, removes the created ones, and restarts the affected
components one host at a time through the wire gates. The operator state (PKI, inventory) is
not changed: the next "hardwire wire" applies it again.
`,
  async run({ argv, log }) {
    const { values, positionals } = parse(argv, { inventory: { type: 'string', short: 'i' }, 'state-dir': { type: 'string' }, json: { type: 'boolean' }, 'dry-run': { type: 'boolean' }, list: { type: 'boolean' } });
    const inv = await inventoryOrLab(values, log, false);
    const stateDir = stateDirFrom(values);
    const ctx = newContext(inv, stateDir, clusterStateDir(stateDir, inv), { dryRun: values['dry-run'] === true, acceptNewHostKeys: false, gateTimeoutMs: 90_000 }, log);
    if (values.list) {
      const lists: Record<string, string[]> = {};
      await runPhases([connectPhase, { id: 'list', title: 'List backups', async run(c) {
        await Promise.all(c.inv.hosts.map(async (h) => {
          const r = await c.sessions.get(h.name)!.exec(['ls', '-1', BACKUP_ROOT], { allowFail: true });
          lists[h.name] = r.stdout.split('\n').filter(Boolean).sort();
        }));
      } }], ctx);
      if (values.json) printJson({ backups: lists });
      else for (const [h, ids] of Object.entries(lists)) process.stdout.write(`${h}: ${ids.join(' ') || '(none)'}\n`);
      return 0;
    }
    const runId = positionals[0];
    if (!runId || positionals.length > 1) throw new InputError('run-id', 'give exactly one run id (see "hardwire rollback --list")');
    await runPhases([connectPhase, rollbackPhase(runId), ...START_PHASES], ctx);
    if (values.json) printJson({ runId, dryRun: ctx.opts.dryRun, actions: ctx.wet.intents, restarted: ctx.restarted, durationsMs: ctx.durationsMs });
    return 0;
  },
};
