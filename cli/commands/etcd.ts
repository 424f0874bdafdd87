import { resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { act, group, topCommand, type Cli, type Run } from '../command.ts';
import {
  hostOptions,
  options,
  stateDirFrom,
  type HostOpts,
  type InventoryOpts,
} from '../common.ts';
import { hostContext, inventoryOrLab } from '../lab-inventory.ts';
import { session } from '../../core/apply/context.ts';
import { runPhases } from '../../core/apply/phase.ts';
import { connectPhase } from '../../core/apply/phases/connect.ts';
import { restorePhase } from '../../core/apply/phases/restore.ts';
import { START_PHASES } from '../../core/apply/phases/start.ts';
import { clusterStateDir } from '../../core/pki/store.ts';
import { listSnapshots, saveSnapshot } from '../../core/apply/etcd-snapshot.ts';
import { checkEtcd } from '../../core/gates/etcd.ts';
import { printJson } from '../../lib/log.ts';
import { InputError } from '../../lib/errors.ts';
import { DEFAULT_GATE_TIMEOUT_MS } from '../../lib/constants.ts';

const HELP = `
usage: hardwire etcd snapshot save    [--inventory FILE] [--state-dir DIR] [--accept-new-host-keys] [--quiet] [--json]
       hardwire etcd snapshot list    [--inventory FILE] [--state-dir DIR] [--json]
       hardwire etcd snapshot restore FILE [--inventory FILE] [--state-dir DIR] [--dry-run] [--gate-timeout SECONDS] [--accept-new-host-keys] [--quiet] [--json]

save: etcdctl snapshot save on a healthy member (mTLS, healthcheck-client cert), copied to
DIR/<cluster>/snapshots/<run-id>.db (0600) and verified with etcdutl snapshot status.
wire takes one the same way before any step that restarts or reconfigures etcd.

restore, step by step (what it runs, in order):
  1. verify FILE with etcdutl snapshot status
  2. stop kube-scheduler, kube-controller-manager, kube-apiserver, then etcd, on every host
  3. on every etcd member: copy FILE, move /var/lib/etcd aside to /var/lib/etcd.before-restore-<run-id>
     (kept), etcdutl snapshot restore FILE --name <member> --initial-cluster <all members>
     --initial-cluster-token hardwire-<cluster> --initial-advertise-peer-urls https://<addr>:2380
  4. start etcd everywhere and wait for health + member list, then the apiservers (/readyz), then
     the controller-manager and scheduler (Leases renewing); --gate-timeout: how long each gate
     waits, in seconds (default ${DEFAULT_GATE_TIMEOUT_MS / 1000})
`;

interface Opts extends InventoryOpts, HostOpts {
  json?: boolean;
}
interface RestoreOpts extends Opts {
  dryRun?: boolean;
}

export function declare(root: Cli): Cli {
  const etcd = topCommand(
    root,
    'etcd',
    'etcd snapshots: save (verified), list, restore (all members, then a gated restart)',
    HELP,
  )
    .addOption(options.inventory())
    .addOption(options.stateDir())
    .addOption(options.json());
  const snapshot = etcd.command('snapshot');

  hostOptions(snapshot.command('save'), { gates: false }).action(
    act(async ({ opts, log }: Run<Opts>) => {
      const ctx = await hostContext(opts, log, false);
      let out: unknown;
      await runPhases(
        [
          connectPhase,
          {
            id: 'save',
            title: 'Snapshot etcd',
            async run(c) {
              // The first member that reports a healthy cluster gives the snapshot.
              for (const h of c.inv.etcdHosts) {
                try {
                  await checkEtcd(c.inv, session(c, h.name));
                } catch {
                  continue;
                }
                out = await saveSnapshot(
                  c.inv,
                  h,
                  session(c, h.name),
                  c.wet,
                  c.clusterDir,
                  `${c.runId}-manual`,
                );
                return;
              }
              throw new InputError(
                'etcd',
                'no healthy etcd member to take a snapshot from; check "hardwire verify"',
              );
            },
          },
        ],
        ctx,
      );
      if (opts.json) printJson(out);
      else process.stdout.write(`${(out as { file: string }).file}\n`);
      return 0;
    }),
  );

  snapshot.command('list').action(
    act(async ({ opts, log }: Run<Opts>) => {
      const inv = await inventoryOrLab(opts, log, false);
      const list = listSnapshots(clusterStateDir(stateDirFrom(opts), inv));
      if (opts.json) printJson({ snapshots: list });
      else
        for (const s of list)
          process.stdout.write(`${s.name}  ${s.sizeBytes} bytes  ${s.mtime}  ${s.file}\n`);
      return 0;
    }),
  );

  hostOptions(
    snapshot
      .command('restore')
      .argument('<FILE>', 'pass a snapshot from "hardwire etcd snapshot list"')
      .addOption(options.dryRun()),
    { gates: true },
  ).action(
    act(async ({ opts, log }: Run<RestoreOpts>, file: string) => {
      if (!existsSync(file))
        throw new InputError(
          'FILE',
          `${file} does not exist; pass a snapshot from "hardwire etcd snapshot list"`,
        );
      const ctx = await hostContext(opts, log, opts.dryRun === true);
      await runPhases([connectPhase, restorePhase(resolve(file)), ...START_PHASES], ctx);
      if (opts.json)
        printJson({
          restoredFrom: resolve(file),
          dryRun: ctx.opts.dryRun,
          actions: ctx.wet.intents,
          durationsMs: ctx.durationsMs,
        });
      return 0;
    }),
  );

  group(snapshot);
  return group(etcd);
}
