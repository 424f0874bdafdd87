// The API drills (3.C1 webhook-cabundle, 3.C2 conversion-webhook, 3.C3 apf-starve) as
// subcommands of `hardwire drill`; cli/commands/drill.ts adds them with one call.
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
import { printJson, type Logger } from '../../lib/log.ts';
import { InputError } from '../../lib/errors.ts';
import { isIPv4 } from 'node:net';
import type { Inventory } from '../../core/inventory/load.ts';
import type { ApiDrillOptions } from '../../harness/drills/api/common.ts';
import { apiDrillMarkdown, unmet, type ApiDrillReport } from '../../harness/drills/api/report.ts';
import { cabundleDrill } from '../../harness/drills/api/cabundle.ts';
import { conversionDrill } from '../../harness/drills/api/conversion.ts';
import { apfDrill } from '../../harness/drills/api/apf.ts';

type Drill = (
  inv: Inventory,
  stateDir: string,
  opts: ApiDrillOptions,
  log: Logger,
) => Promise<ApiDrillReport>;

const COMMON = `
  --keep-broken           stop after the break and print the recovery command
  --observe-timeout SEC   how long to wait for the failure (default 120, at least 10)
  --gate-timeout SEC      how long each gate waits
  --accept-new-host-keys  trust unknown host keys on first contact; --quiet: no progress lines
  --md FILE, --json       the report as Markdown in FILE, or one JSON document on stdout
Exit 0 when recovered (or, with --keep-broken, when the break was observed); 1 otherwise, with one
line naming the expectation that was not met.`;

const DRILLS: {
  name: string;
  ids: string[];
  summary: string;
  help: string;
  run: Drill;
  listen: boolean;
}[] = [
  {
    name: 'webhook-cabundle',
    ids: ['3.C1'],
    run: cabundleDrill,
    listen: true,
    summary: '3.C1: flip one byte of a validating webhook caBundle (failurePolicy Fail)',
    help: `
usage: hardwire drill webhook-cabundle [--listen ADDRESS] [--keep-broken] [--md FILE] [--json]

Drill 3.C1. Runs a real HTTPS validating webhook (drill CA, never the cluster CA) on this machine's
address on the cluster network (--listen, default: the lab bridge address), registers it with
failurePolicy Fail for one namespace, proves it admits writes, flips one byte of caBundle, captures
the apiserver's "Failed calling webhook" line and the refused writes (the fix included), shows the
label-exclusion fix, then recovers with the escape hatch (patch the configuration) and cleans up.${COMMON}`,
  },
  {
    name: 'conversion-webhook',
    ids: ['3.C2'],
    run: conversionDrill,
    listen: true,
    summary: '3.C2: a CRD conversion webhook that returns garbage',
    help: `
usage: hardwire drill conversion-webhook [--listen ADDRESS] [--keep-broken] [--md FILE] [--json]

Drill 3.C2. A CRD with v1 (stored) and v2 (served) converted by the drill's HTTPS webhook; objects
written in both versions; the webhook switches to garbage; reads of that type fail (captured with
kubectl and from the apiserver journal) while other types and another CRD still read; the webhook
is fixed and the objects are shown intact; everything is deleted.${COMMON}`,
  },
  {
    name: 'apf-starve',
    ids: ['3.C3'],
    run: apfDrill,
    listen: false,
    summary: '3.C3: starve one APF priority level with a flood from one identity',
    help: `
usage: hardwire drill apf-starve [--keep-broken] [--md FILE] [--json]

Drill 3.C3. A client cert from the cluster CA (CA unchanged) with read RBAC, a FlowSchema sending it
to a PriorityLevelConfiguration with 1 share, 1 queue of length 1; a flood, 40 at a time, that lasts
until kubectl as that identity has met 429s (at least 6 s, at most 60 s or 100000 requests), shows
429s with the X-Kubernetes-PF-* headers and apiserver_flowcontrol_rejected_requests_total,
while an admin request and the controller-manager's Lease renewals sail through (latencies
measured). Everything it created is deleted.${COMMON}`,
  },
];

interface Opts extends InventoryOpts, HostOpts {
  json?: boolean;
  keepBroken?: boolean;
  observeTimeout: number;
  md?: string;
  listen?: string;
}

export function declareApiDrills(drill: Cli): void {
  for (const d of DRILLS) {
    const cmd = hostOptions(
      drill
        .command(d.name)
        .aliases(d.ids)
        .summary(d.summary)
        .configureHelp({ formatHelp: () => `${d.help.trim()}\n` })
        .option('--keep-broken', 'stop after the break; print the recovery command')
        .option(
          '--observe-timeout <seconds>',
          'how long to wait for the failure',
          seconds('--observe-timeout', 10),
          120,
        ),
      { gates: true },
    ).addOption(options.md());
    if (d.listen) {
      cmd.option(
        '--listen <address>',
        'IPv4 address of this machine for the drill webhook, reachable from every apiserver',
        (v: string) => {
          if (!isIPv4(v))
            throw new InputError(
              '--listen',
              `"${v}" is not an IPv4 address; pass this machine's address on the cluster network, e.g. the lab bridge 10.213.x.1`,
            );
          return v;
        },
      );
    }
    cmd.action(
      act(async ({ opts, log }: Run<Opts>) => {
        const inv = await inventoryOrLab(opts, log, false);
        const r = await d.run(
          inv,
          stateDirFrom(opts),
          {
            ...connection(opts),
            observeTimeoutMs: opts.observeTimeout * 1000,
            keepBroken: opts.keepBroken === true,
            listen: opts.listen,
          },
          log,
        );
        const md = apiDrillMarkdown(r);
        if (opts.md) writeFileSync(opts.md, md);
        if (opts.json) printJson(r);
        else process.stdout.write(md);
        if (r.keptBroken) log.warn(`kept broken; recover with: ${r.recoverCommand}`);
        const why = unmet(r);
        if (why === undefined) return 0;
        process.stderr.write(`error: drill ${d.name}: ${why}\n`);
        return 1;
      }),
    );
  }
}
