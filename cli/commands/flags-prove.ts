// `hardwire flags prove`: the flag map's citations, hit live by delve (harness/prove).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { FlagMap } from '../../core/flags/map.ts';
import type { ProveReport } from '../../harness/prove/index.ts';
import { act, type Cli, type Run } from '../command.ts';
import {
  gateTimeoutMs,
  hostOptions,
  options,
  stateDirFrom,
  type HostOpts,
  type InventoryOpts,
} from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { InputError } from '../../lib/errors.ts';
import { printJson, type Logger } from '../../lib/log.ts';

interface Opts extends InventoryOpts, HostOpts {
  component?: string;
  json?: boolean;
  md?: string;
  html?: string;
  report?: string;
  map?: string;
  record?: boolean;
  reclassify?: boolean;
  flagsOf?: string;
}

/** --reclassify: the committed records' site statuses re-derived from the map and each run's argv, written back; one line (or object) per record. */
async function reclassifyRecords(opts: Opts): Promise<number> {
  for (const [o, set] of [
    ['--report', opts.report !== undefined],
    ['--record', opts.record],
    ['--map', opts.map !== undefined],
    ['--md', opts.md !== undefined],
    ['--html', opts.html !== undefined],
    ['--flags-of', opts.flagsOf !== undefined],
  ] as const) {
    if (set)
      throw new InputError(
        o,
        'does not apply to --reclassify, which rewrites the committed records from the committed map; drop it',
      );
  }
  const { PROVABLE } = await import('../../harness/prove/index.ts');
  if (opts.component !== undefined && !Object.hasOwn(PROVABLE, opts.component))
    throw new InputError(
      '--component',
      `"${opts.component}" has no record; one of ${Object.keys(PROVABLE).join(', ')}`,
    );
  const { loadProven, recordCounts, writeProven } = await import('../../core/flags/proven.ts');
  const { loadFlagMap, defaultFlagVersion } = await import('../../core/flags/map.ts');
  const { reclassify } = await import('../../harness/prove/reclassify.ts');
  const out = [];
  for (const component of opts.component ? [opts.component] : Object.keys(PROVABLE)) {
    const r = loadProven(component, defaultFlagVersion);
    if (!r) continue;
    const next = reclassify(r, loadFlagMap(component, r.kubernetesVersion));
    writeProven(next);
    out.push({ component, kubernetesVersion: r.kubernetesVersion, ...recordCounts(next) });
  }
  if (opts.json) printJson(out);
  else
    for (const c of out)
      process.stdout.write(
        `${c.component} ${c.kubernetesVersion}: ${c.hit} of ${c.sites} cited sites hit, ${c.off} ruled out by the unit's flags: ${c.hit} of ${c.sites - c.off} (${(100 * c.share).toFixed(1)}%)${c.contradictions ? `; ${c.contradictions} hit though ruled out: CONTRADICTION` : ''}\n`,
      );
  return 0;
}

/** A report saved with --json, rendered again without a lab. */
function savedReport(file: string, component: string | undefined): ProveReport {
  if (!existsSync(file))
    throw new InputError(
      '--report',
      `${file} does not exist; give a file written by "flags prove --json"`,
    );
  let r: ProveReport;
  try {
    r = JSON.parse(readFileSync(file, 'utf8')) as ProveReport;
  } catch {
    throw new InputError(
      '--report',
      `${file} is not JSON; give a file written by "flags prove --json"`,
    );
  }
  if (typeof r.component !== 'string' || !Array.isArray(r.flags) || !r.counts)
    throw new InputError(
      '--report',
      `${file} is not a flags prove report; give a file written by "flags prove --json"`,
    );
  if (component !== undefined && component !== r.component)
    throw new InputError(
      '--component',
      `is ${component}, but ${file} proves ${r.component}; drop --component or give the matching report`,
    );
  return r;
}

async function runProve(opts: Opts, log: Logger): Promise<ProveReport> {
  if (!opts.component)
    throw new InputError('--component', 'missing; e.g. --component kube-scheduler');
  if (opts.record && opts.map)
    throw new InputError('--record', 'records the committed map only; drop --map');
  const { TOOLS } = await import('../../harness/prove/foreign/translate.ts');
  const flagsOf = TOOLS.find((t) => t === opts.flagsOf);
  if (opts.flagsOf !== undefined && !flagsOf)
    throw new InputError(
      '--flags-of',
      `"${opts.flagsOf}" is not a tool whose flags prove can run; give ${TOOLS.join(' or ')}, or drop it for the unit's own flags`,
    );
  const { prove } = await import('../../harness/prove/index.ts');
  const inv = await inventoryOrLab(opts, log, false);
  const map =
    opts.map === undefined ? undefined : (JSON.parse(readFileSync(opts.map, 'utf8')) as FlagMap);
  // Under delve the component starts slower than its unit: five minutes, unless --gate-timeout says otherwise.
  const gateMs = opts.gateTimeout === undefined ? 300_000 : gateTimeoutMs(opts);
  const report = await prove(
    inv,
    stateDirFrom(opts),
    opts.component,
    {
      gateTimeoutMs: gateMs,
      acceptNewHostKeys: opts.acceptNewHostKeys === true,
      ...(map ? { map } : {}),
      ...(flagsOf ? { flagsOf } : {}),
    },
    log,
  );
  if (opts.record && report.exited === undefined) {
    const { provenRecord } = await import('../../harness/prove/index.ts');
    const { writeProven } = await import('../../core/flags/proven.ts');
    log.info(`recorded in ${writeProven(provenRecord(report))}`);
  }
  return report;
}

export function declareProve(flags: Cli): void {
  const prove = flags
    .command('prove')
    .description(
      "run the debug build under delve on the first control-plane host, with its unit's flags, and report which cited read sites it hits",
    )
    .option(
      '--component <name>',
      'the component to prove (kube-scheduler, kube-controller-manager, kube-apiserver, etcd)',
    )
    .addOption(options.inventory())
    .addOption(options.stateDir())
    .addOption(options.json())
    .addOption(options.md())
    .addOption(
      options.html('the report (sortable tables, each site linked to its line at the tag)'),
    )
    .option(
      '--report <file>',
      'render a report saved with --json (as text, JSON, --md FILE or --html FILE) instead of running prove',
    )
    .option(
      '--record',
      'write the result to core/flags/proven/<version>/<component>.json: the "proven live" column of the flag map and of compare',
    )
    .option(
      '--reclassify',
      "no lab: re-derive each committed record's site statuses (hit, not hit, off: ruled out by the unit's flags) from the flag map and the run's argv, write them back, print the counts",
    )
    .option(
      '--flags-of <tool>',
      "prove the flags kubeadm (its own `init phase … --dry-run`) or k0s (read live from a k0s controller on a lab host of its own) passes to the component, each file mapped by role to hardwire's, on hardwire's host",
    )
    .option(
      '--map <file>',
      'a flag map JSON to prove instead of the committed one (the test proves a mutated citation with it)',
    );
  hostOptions(prove, { gates: true }).action(
    act(async ({ opts, log }: Run<Opts>) => {
      if (opts.reclassify) return reclassifyRecords(opts);
      if (opts.report !== undefined && (opts.record || opts.map !== undefined))
        throw new InputError(
          opts.record ? '--record' : '--map',
          'proves live; drop it to render a saved --report',
        );
      const report =
        opts.report === undefined
          ? await runProve(opts, log)
          : savedReport(opts.report, opts.component);
      const { formatMarkdown, formatText } = await import('../../harness/prove/format.ts');
      // --md FILE and --html FILE write files (as every command's do); stdout gets the text, or the JSON document.
      if (opts.md) writeFileSync(opts.md, formatMarkdown(report));
      if (opts.html)
        writeFileSync(opts.html, (await import('../../harness/prove/html.ts')).formatHtml(report));
      if (opts.json) printJson(report);
      else process.stdout.write(formatText(report));
      return report.exited === undefined ? 0 : 1;
    }),
  );
}
