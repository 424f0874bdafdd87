import { act, group, topCommand, type Cli, type Run } from '../command.ts';
import {
  connection,
  hostOptions,
  options,
  stateDirFrom,
  type HostOpts,
  type InventoryOpts,
} from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { rotateEncryption } from '../../core/apply/encryption-rotate.ts';
import { printJson } from '../../lib/log.ts';

const HELP = `
usage: hardwire encryption rotate [--inventory FILE] [--state-dir DIR] [--dry-run] [--gate-timeout SECONDS] [--accept-new-host-keys] [--quiet] [--json]

rotate: replaces the key that encrypts Secrets in etcd, as the Kubernetes docs do it
(tasks/administer-cluster/encrypt-data, "Rotating a decryption key"). Each step's config is written
to DIR/<cluster>/pki/encryption-config.yaml and wired to every control-plane host (each apiserver
restarted in order, gated) before the next:
  1. a new secretbox key second: every apiserver can read what it will write
  2. the new key first: every write is encrypted with it
  3. every Secret read and written back through the API, so that each is stored under it
  4. every Secret's value in etcd read with etcdctl: if one is not under the new key, it stops
     there with the old key kept; else the old key(s) dropped
Stopped part way, it goes on from the step the config reached. A cluster made with aescbc moves to
secretbox this way. --dry-run prints the steps and changes nothing.
`;

interface Opts extends InventoryOpts, HostOpts {
  json?: boolean;
  dryRun?: boolean;
}

export function declare(root: Cli): Cli {
  const enc = topCommand(
    root,
    'encryption',
    'Secrets encryption at rest: rotate the key (add second, make first, rewrite every Secret, drop the old)',
    HELP,
  )
    .addOption(options.inventory())
    .addOption(options.stateDir())
    .addOption(options.json());
  hostOptions(enc.command('rotate').addOption(options.dryRun()), { gates: true }).action(
    act(async ({ opts, log }: Run<Opts>) => {
      const inv = await inventoryOrLab(opts, log, !opts.dryRun);
      const report = await rotateEncryption(
        inv,
        stateDirFrom(opts),
        { dryRun: opts.dryRun === true, ...connection(opts) },
        log,
      );
      if (opts.json) printJson(report);
      else {
        for (const s of report.steps)
          process.stdout.write(`${report.dryRun ? 'would ' : ''}${s.step}: ${s.keys.join(', ')}\n`);
        process.stdout.write(
          `${report.dryRun ? 'would rotate' : 'rotated'} ${report.from.join(', ')} -> ${report.to.join(', ')}${report.dryRun ? '' : `; ${report.rewritten} Secret(s) rewritten`}\n`,
        );
      }
      return 0;
    }),
  );
  return group(enc);
}
