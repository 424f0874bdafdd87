// `hardwire flags prove`: the flag map's citations, hit live by delve (harness/prove).
import { readFileSync } from 'node:fs';
import type { FlagMap } from '../../harness/flags/map.ts';
import { act, type Cli, type Run } from '../command.ts';
import { gateTimeoutMs, options, stateDirFrom, type InventoryOpts } from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { InputError } from '../../lib/errors.ts';
import { printJson } from '../../lib/log.ts';

interface Opts extends InventoryOpts { component?: string; json?: boolean; md?: boolean; map?: string; record?: boolean; gateTimeout?: number; acceptNewHostKeys?: boolean }

export function declareProve(flags: Cli): void {
  flags.command('prove')
    .description('run the debug build under delve on the first control-plane host, with its unit\'s flags, and report which cited read sites it hits')
    .option('--component <name>', 'the component to prove (kube-scheduler, kube-controller-manager, etcd)')
    .addOption(options.inventory())
    .addOption(options.stateDir())
    .addOption(options.acceptNewHostKeys())
    .addOption(options.gateTimeout())
    .addOption(options.json())
    .option('--md', 'the report as Markdown')
    .option('--record', 'write the result to harness/flags/proven/<version>/<component>.json: the "proven live" column of the flag map and of compare')
    .option('--map <file>', 'a flag map JSON to prove instead of the committed one (the test proves a mutated citation with it)')
    .addOption(options.quiet())
    .action(act(async ({ opts, log }: Run<Opts>) => {
      if (!opts.component) throw new InputError('--component', 'missing; e.g. --component kube-scheduler');
      if (opts.json && opts.md) throw new InputError('--md', 'give --json or --md, not both');
      if (opts.record && opts.map) throw new InputError('--record', 'records the committed map only; drop --map');
      const { prove } = await import('../../harness/prove/index.ts');
      const inv = await inventoryOrLab(opts, log, false);
      const map = opts.map === undefined ? undefined : JSON.parse(readFileSync(opts.map, 'utf8')) as FlagMap;
      // Under delve the component starts slower than its unit: five minutes, unless --gate-timeout says otherwise.
      const gateMs = opts.gateTimeout === undefined ? 300_000 : gateTimeoutMs(opts);
      const report = await prove(inv, stateDirFrom(opts), opts.component, { gateTimeoutMs: gateMs, acceptNewHostKeys: opts.acceptNewHostKeys === true, ...(map ? { map } : {}) }, log);
      if (opts.record && report.exited === undefined) {
        const { provenRecord } = await import('../../harness/prove/index.ts');
        const { writeProven } = await import('../../harness/flags/proven.ts');
        log.info(`recorded in ${writeProven(provenRecord(report))}`);
      }
      const { formatMarkdown, formatText } = await import('../../harness/prove/format.ts');
      if (opts.json) printJson(report);
      else process.stdout.write(opts.md ? formatMarkdown(report) : formatText(report));
      return report.exited === undefined ? 0 : 1;
    }));
}
