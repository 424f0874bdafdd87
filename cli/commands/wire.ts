import { Option } from 'commander';
import { act, topCommand, type Cli, type Run } from '../command.ts';
import {
  connection,
  hostOptions,
  options,
  stateDirFrom,
  type HostOpts,
  type InventoryOpts,
} from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { PLAN_PHASES, WIRE_PHASES, wire } from '../../core/apply/wire.ts';
import { adminKubeconfigPath } from '../../core/apply/creds.ts';
import { formatPlan } from '../../core/plan/format.ts';
import { printJson } from '../../lib/log.ts';
import { DEFAULT_GATE_TIMEOUT_MS } from '../../lib/constants.ts';

/** The steps that change hosts, from wire's own phase list (core/apply/wire.ts), so a new component's stage is listed. */
function steps(): string {
  return WIRE_PHASES.filter((p) => !PLAN_PHASES.includes(p))
    .map((p, i) => `  ${String(i + 1).padStart(2)}. ${p.title}`)
    .join('\n');
}

const HELP = () => `
usage: hardwire wire [--inventory FILE] [--state-dir DIR] [--dry-run] [--verify-hashes] [--accept-new-host-keys] [--gate-timeout SECONDS] [--quiet] [--json]

Without --inventory, uses the local lab (brings it up if needed: "hardwire lab up").
First the local work (PKI, rendered host trees, binaries), then it connects, reads each host and
plans. Then, in order (each start or restart stage gated; the gates come from the component registry):
${steps()}
A file is sent only when its hash or its mode differs, atomically, with its mode. A component
restarts only when something it reads changed, one host at a time, each followed by its gate.
Each host keeps a record of what wire wrote (/var/lib/hardwire/installed.json: sha256, size, inode,
mtime, ctime); a file whose stat still matches it is not hashed again. --verify-hashes hashes every
file and cached binary anyway; so does any run more than a day after a host's last full hash.
--gate-timeout: how long each gate waits, in seconds (default ${DEFAULT_GATE_TIMEOUT_MS / 1000}).
--dry-run prints the per-host plan and changes nothing on any host (the local PKI and
rendered trees under the state dir are still created, since the plan is computed from them).
Host keys are pinned (inventory knownHosts); unknown keys are refused unless --accept-new-host-keys.
`;

interface Opts extends InventoryOpts, HostOpts {
  json?: boolean;
  dryRun?: boolean;
  verifyHashes?: boolean;
}

export function declare(root: Cli): Cli {
  const wireCmd = topCommand(
    root,
    'wire',
    'push PKI, units and binaries over SSH, start etcd -> apiserver -> controllers -> workers, gate each step',
    HELP,
  )
    .addOption(options.inventory())
    .addOption(options.stateDir())
    .addOption(options.dryRun())
    .addOption(
      new Option(
        '--verify-hashes',
        'hash every file on the hosts and every cached binary, whatever their stat says',
      ),
    );
  return hostOptions(wireCmd, { gates: true })
    .addOption(options.json())
    .action(
      act(async ({ opts, log }: Run<Opts>) => {
        const inv = await inventoryOrLab(opts, log, !opts.dryRun);
        if (inv.endpointWarning) log.warn(inv.endpointWarning);
        const t0 = performance.now();
        const ctx = await wire(
          inv,
          stateDirFrom(opts),
          {
            dryRun: opts.dryRun === true,
            verifyHashes: opts.verifyHashes === true,
            ...connection(opts),
          },
          log,
        );
        const totalMs = Math.round(performance.now() - t0);
        const report = {
          dryRun: ctx.opts.dryRun,
          kubeconfig: adminKubeconfigPath(ctx.clusterDir),
          stateDir: ctx.clusterDir,
          hosts: ctx.inv.hosts.map((h) => ({
            name: h.name,
            address: h.address,
            /** As preflight read it: every binary and image the host gets is built for it. */
            arch: ctx.profiles.get(h.name)?.arch ?? null,
            /** Files hashed on the host this run; the others matched the host's record by stat. */
            hashedFiles: ctx.facts.get(h.name)?.hashed ?? 0,
            components: Object.fromEntries(
              [...(ctx.facts.get(h.name)?.units ?? new Map())].map(([c, u]) => [
                c,
                { activeState: u.activeState, activeEnterMonotonic: u.activeEnterMonotonic },
              ]),
            ),
          })),
          plan: ctx.plan,
          restarted: ctx.restarted.map((r) => ({ host: r.host, unit: r.unit, action: r.action })),
          runId: ctx.runId,
          backups: ctx.backups.length
            ? {
                runId: ctx.runId,
                hosts: ctx.inv.hosts.map((h) => h.name).filter((h) => ctx.backups.includes(h)),
              }
            : null,
          snapshot: ctx.snapshot ?? null,
          // Every host change this run made (or, in a dry run, would make), in order: the Wet log.
          actions: ctx.wet.intents,
          durationsMs: { ...ctx.durationsMs, total: totalMs },
        };
        if (opts.json) {
          printJson(report);
        } else if (ctx.opts.dryRun) {
          process.stdout.write(formatPlan(ctx.plan!));
        } else {
          log.info(
            `wired in ${(totalMs / 1000).toFixed(1)}s; ${report.restarted.length} unit(s) (re)started`,
          );
          process.stdout.write(`${report.kubeconfig}\n`);
        }
        return 0;
      }),
    );
}
