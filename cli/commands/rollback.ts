import { act, topCommand, type Cli, type Run } from '../command.ts';
import { hostOptions, options, type HostOpts, type InventoryOpts } from '../common.ts';
import { hostContext } from '../lab-inventory.ts';
import { runPhases } from '../../core/apply/phase.ts';
import { connectPhase } from '../../core/apply/phases/connect.ts';
import { checkRunId, rollbackPhase } from '../../core/apply/phases/rollback.ts';
import { START_PHASES } from '../../core/apply/phases/start.ts';
import { printJson } from '../../lib/log.ts';
import { InputError } from '../../lib/errors.ts';
import { DEFAULT_GATE_TIMEOUT_MS } from '../../lib/constants.ts';
import { BACKUP_ROOT } from '../../core/apply/backup.ts';

const HELP = `
usage: hardwire rollback <run-id> [--inventory FILE] [--state-dir DIR] [--dry-run] [--gate-timeout SECONDS] [--accept-new-host-keys] [--quiet] [--json]
       hardwire rollback --list [--inventory FILE] [--state-dir DIR] [--accept-new-host-keys] [--json]

Every wire run that changes a host first copies the files it will overwrite to
${BACKUP_ROOT}/<run-id>/ on that host (the newest 5 runs are kept) and records the files it
creates. rollback restores them atomically, removes the created ones, and restarts the affected
components one host at a time through the wire gates. The operator state (PKI, inventory) is
not changed: the next "hardwire wire" applies it again.
--gate-timeout: how long each gate waits, in seconds (default ${DEFAULT_GATE_TIMEOUT_MS / 1000}).
`;

interface Opts extends InventoryOpts, HostOpts {
  json?: boolean;
  dryRun?: boolean;
  list?: boolean;
}

export function declare(root: Cli): Cli {
  const rollback = topCommand(
    root,
    'rollback',
    'undo a wire run on the hosts from its on-host backups, then restart what it touched (gated)',
    HELP,
  )
    .argument('[run-id]')
    .addOption(options.inventory())
    .addOption(options.stateDir())
    .option('--list', 'list the backups on every host')
    .addOption(options.dryRun());
  return hostOptions(rollback, { gates: true })
    .addOption(options.json())
    .action(
      act(async ({ opts, log }: Run<Opts>, runId: string | undefined) => {
        if (opts.list && runId !== undefined)
          throw new InputError('run-id', `"rollback --list" takes no run id (got ${runId})`);
        if (!opts.list && runId === undefined)
          throw new InputError(
            'run-id',
            'missing; give one run id (see "hardwire rollback --list")',
          );
        // Before the inventory and any connection: a bad id touches nothing.
        if (runId !== undefined) checkRunId(runId);
        const ctx = await hostContext(opts, log, opts.dryRun === true);
        if (opts.list) {
          const lists: Record<string, string[]> = {};
          await runPhases(
            [
              connectPhase,
              {
                id: 'list',
                title: 'List backups',
                async run(c) {
                  await Promise.all(
                    c.inv.hosts.map(async (h) => {
                      const r = await c.sessions
                        .get(h.name)!
                        .exec(['ls', '-1', BACKUP_ROOT], { allowFail: true });
                      lists[h.name] = r.stdout.split('\n').filter(Boolean).sort();
                    }),
                  );
                },
              },
            ],
            ctx,
          );
          if (opts.json) printJson({ backups: lists });
          else
            for (const [h, ids] of Object.entries(lists))
              process.stdout.write(`${h}: ${ids.join(' ') || '(none)'}\n`);
          return 0;
        }
        await runPhases([connectPhase, rollbackPhase(runId!), ...START_PHASES], ctx);
        if (opts.json)
          printJson({
            runId,
            dryRun: ctx.opts.dryRun,
            actions: ctx.wet.intents,
            restarted: ctx.restarted,
            durationsMs: ctx.durationsMs,
          });
        return 0;
      }),
    );
}
