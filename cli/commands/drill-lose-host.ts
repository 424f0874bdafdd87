// `hardwire drill lose-host`: power off one control-plane host of a lab and watch the cluster carry on
// (harness/drills/lose-host.ts).
import { writeFileSync } from 'node:fs';
import { act, type Cli, type Run } from '../command.ts';
import {
  connection,
  hostOptions,
  options,
  seconds,
  stateDirFrom,
  type HostOpts,
  type InventoryOpts,
} from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { printJson } from '../../lib/log.ts';

interface Opts extends InventoryOpts, HostOpts {
  host?: string;
  hold: number;
  md?: string;
  json?: boolean;
}

/** 50 s of node-monitor-grace-period, 300 s of the default toleration, and a margin: the eviction shows. */
export const LOSE_HOST_HOLD_S = 400;

export function declareLoseHost(drill: Cli): void {
  hostOptions(
    drill
      .command('lose-host')
      .summary(
        "lose-host: power off one control-plane host of a lab; the VIP moves, the other Nodes stay Ready, the lost host's Pods are handled as Kubernetes intends, and it rejoins",
      )
      .option('--host <host>', 'the control-plane host to power off (default: the first)')
      .option(
        '--hold <seconds>',
        `keep the cluster broken this long (the host off), then power it on (default ${LOSE_HOST_HOLD_S}: long enough to see the eviction)`,
        seconds('--hold', 10),
        LOSE_HOST_HOLD_S,
      )
      .addOption(options.md()),
    { gates: true },
  ).action(
    act(async ({ opts, log }: Run<Opts>) => {
      const { loseHost, loseHostMarkdown, loseHostTarget } = await import(
        '../../harness/drills/lose-host.ts'
      );
      const inv = await inventoryOrLab(opts, log, false);
      loseHostTarget(inv, opts.host);
      const report = await loseHost(
        inv,
        stateDirFrom(opts),
        { ...connection(opts), ...(opts.host ? { host: opts.host } : {}), holdS: opts.hold },
        log,
      );
      const md = loseHostMarkdown(report);
      if (opts.md) writeFileSync(opts.md, md);
      if (opts.json) printJson(report);
      else process.stdout.write(md);
      return report.recovered ? 0 : 1;
    }),
  );
}
