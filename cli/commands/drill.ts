import { writeFileSync } from 'node:fs';
import { act, group, topCommand, type Cli, type Run } from '../command.ts';
import {
  connection,
  hostOptions,
  oneOf,
  options,
  seconds,
  stateDirFrom,
  type HostOpts,
  type InventoryOpts,
} from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { printJson } from '../../lib/log.ts';
import { InputError } from '../../lib/errors.ts';
import { DEFAULT_GATE_TIMEOUT_MS } from '../../lib/constants.ts';
import { declareApiDrills } from './drill-api.ts';
import { declareLoseHost } from './drill-lose-host.ts';
import { declareApiserverDown, declareCertMistakes, declareKillOne } from './drill-runs.ts';
import {
  TARGETS,
  certExpiryDrill,
  drillMarkdown,
  type Mode,
  type Target,
} from '../../harness/drills/cert-expiry.ts';

const HELP = `
usage: hardwire drill list [--json]
       hardwire drill NAME|ID ...   (a drill by its name or its curriculum id: "drill 3.C5" is "drill cert-expiry")
       hardwire drill cert-expiry [--target TARGET] [--mode window|expired] [--window SECONDS]
                                  [--observe-timeout SECONDS] [--gate-timeout SECONDS] [--accept-new-host-keys]
                                  [--inventory FILE] [--state-dir DIR] [--md FILE] [--json] [--quiet]

list: every drill with its curriculum id(s), name and summary (--json: one document).

Drill 3.C5, the expired component certificate, against a wired cluster (the local lab by default).
  1. baseline: every gate green, CA fingerprints (operator copy and every host), Lease renew times
  2. break: reissue the target's cert from the real CA (same subject, SANs, usages and key), valid
     only for --window seconds (default 120), or already expired with --mode expired; install it
     on the hosts that have it (etcd-peer: the first etcd host only) and restart the component
  3. observe: the first x509 line from the journal of the component that logs it (journalctl -g,
     never synthesised), the symptom (Lease not renewing, /readyz etcd failing, TLS rejected,
     etcd unhealthy), and what "certs check" shows. A client cert is checked only at the TLS
     handshake: in window mode, if nothing fails 30 s after expiry, the component is restarted
     once more (recorded), as the next reboot would
  4. recover: "certs renew --restart" for the target (CA unchanged): push, restart its readers one
     host at a time with wire's gates in wire's order, then every gate must be green
  5. report: timeline, --md FILE, --json {target, mode, baseline, captured, symptom,
     checkAfterBreak, recovery, recovered, caFingerprint, timeToDetectMs, timeToRecoverMs, ...}
Targets: ${TARGETS.join(', ')} (default kube-scheduler).
timeToDetectMs: from the moment the component first presented an invalid cert (expiry, or the
restart that loaded an expired one) to when both the x509 line and the symptom were seen.
timeToRecoverMs: from the start of the renew to every gate green. Exit 1 unless recovered.
--observe-timeout: how long to wait for the x509 line and the symptom (default 180, at least 10).
--gate-timeout: how long each gate waits, in seconds (default ${DEFAULT_GATE_TIMEOUT_MS / 1000}).

usage: hardwire drill cert-mistake --kind wrong-san|unknown-ca|wrong-client-cert [COMMON]
       hardwire drill apiserver-down [COMMON]
       hardwire drill kill-one [--host HOST] [COMMON]
       hardwire drill kill-one --plane k0s [--k0s-lab NAME] [--keep-labs] [--observe-timeout S] [--md FILE] [--json]
COMMON: [--keep-broken | --hold SECONDS] [--observe-timeout SECONDS] [--gate-timeout SECONDS]
        [--accept-new-host-keys] [--inventory FILE] [--state-dir DIR] [--md FILE] [--json] [--quiet]
Each: baseline (every gate green, ca.crt hashed on each host), one real break, the first journal line
naming the failure (host, unit, time) with the source line that emits it (module@version/file:line),
the symptom through kubectl, what keeps working; then recovery and every gate green.
  cert-mistake wrong-san          apiserver serving cert without 127.0.0.1 (what the controllers use)
  cert-mistake unknown-ca         scheduler.conf with a cert from a throwaway CA
  cert-mistake wrong-client-cert  controller-manager.conf holding the scheduler's cert (RBAC 403)
     recovery: re-render the file from the cert table with wire's phases; the CA is only read
  apiserver-down (3.C4)           stop every kube-apiserver; watch errors, Lease renewal, leader
                                  election lost, systemd restarts; then the level-triggered payoff
  kill-one (3.6, hardwire half)   SIGKILL kube-apiserver on one host; per-second health samples
  lose-host [--host HOST] [--hold SECONDS]
                                  power off one control-plane host of a lab (default the first) for
                                  --hold seconds (default 400): the VIP moves to a survivor, the other
                                  Nodes stay Ready and renew their Leases, the lost Node goes Unknown,
                                  is tainted unreachable, its Pods are marked NotReady and a Pod of the
                                  drill's is evicted after its 300 s toleration; a new Pod runs on a
                                  survivor. Each step cites the controller line that takes it. Then the
                                  host boots again and every gate must be green
  kill-one --plane k0s            a fresh 1-host lab (--k0s-lab, default drill-k0s, recreated each
                                  run; --keep-labs leaves it up) with one k0s controller; SIGKILL the
                                  k0s controller (MainPID of k0scontroller); per-second samples of
                                  the unit, etcd /health, /readyz, both Leases and each child process
                                  (PID, parent); what went down, for how long, what became of each
                                  child and who restarted it. --observe-timeout defaults to 300 here
--keep-broken stops after the break and prints the recovery command ("hardwire wire", which
re-renders from the table and starts what is down). --hold keeps it broken SECONDS, then recovers.
`;

interface Opts extends InventoryOpts, HostOpts {
  json?: boolean;
  target: Target;
  mode: Mode;
  window: number;
  observeTimeout: number;
  md?: string;
}

export function declare(root: Cli): Cli {
  const drill: Cli = topCommand(
    root,
    'drill',
    'break a wired cluster in a controlled way, capture the real failure, recover in order, report',
    () => `${HELP.trim()}\n\n${drillList(drill)}`,
  )
    .addOption(options.inventory())
    .addOption(options.stateDir())
    .addOption(options.json());

  // One line per drill family.
  declareCertExpiry(drill);
  declareCertMistakes(drill);
  declareApiserverDown(drill);
  declareKillOne(drill);
  declareApiDrills(drill);
  declareLoseHost(drill);
  drill.command('list').action(
    act(async ({ opts }: Run<{ json?: boolean }>) => {
      const list = drills(drill);
      if (opts.json) printJson({ drills: list });
      else {
        const w = Math.max(...list.map((d) => d.ids.join(', ').length));
        const n = Math.max(...list.map((d) => d.name.length));
        for (const d of list)
          process.stdout.write(
            `${d.ids.join(', ').padEnd(w)}  ${d.name.padEnd(n)}  ${d.summary}\n`,
          );
      }
      return 0;
    }),
  );
  return group(drill);
}

/**
 * Every drill, read from the command tree so none is left out: its curriculum ids are its
 * command aliases ("hardwire drill 3.C5" runs cert-expiry), and its summary starts with them.
 */
function drills(drill: Cli): { ids: string[]; name: string; summary: string }[] {
  return drill.commands
    .filter((c) => c.aliases().length > 0 || Object.hasOwn(NO_CURRICULUM_ID, c.name()))
    .map((c) => ({
      ids: c.aliases().length > 0 ? c.aliases() : [c.name()],
      name: c.name(),
      summary: c.summary().replace(/^[^:]*: /, ''),
    }))
    .sort((a, b) => a.ids[0]!.localeCompare(b.ids[0]!, 'en', { numeric: true }));
}

/** Every drill subcommand with its summary (which names its curriculum id). */
/** Drills the curriculum has no id for, each with why: listed under their name, whose summary starts with it. */
export const NO_CURRICULUM_ID: Readonly<Record<string, string>> = {
  'lose-host':
    "issue 41's acceptance (a control-plane host powered off); the curriculum's Phase 3 has no such module",
};

function drillList(drill: Cli): string {
  const subs = drill.commands
    .filter((c) => c.aliases().length > 0 || Object.hasOwn(NO_CURRICULUM_ID, c.name()))
    .map((c) => [c.name(), c.summary()] as const);
  const w = Math.max(...subs.map(([n]) => n.length));
  return `drills, with their curriculum ids where they have one (hardwire drill NAME --help for one; "hardwire drill list" lists them; an id runs its drill):\n${subs.map(([n, s]) => `  ${n.padEnd(w)}  ${s}`).join('\n')}\n`;
}

function declareCertExpiry(drill: Cli): void {
  hostOptions(
    drill
      .command('cert-expiry')
      .alias('3.C5')
      .summary(
        '3.C5: an expired component certificate (a window, or already expired), renewed with the CA unchanged',
      )
      .option(
        '--target <target>',
        'the component whose cert expires',
        oneOf('--target', TARGETS),
        'kube-scheduler',
      )
      .option(
        '--mode <mode>',
        'window or expired',
        oneOf('--mode', ['window', 'expired'] as const),
        'window',
      )
      .option(
        '--window <seconds>',
        'validity of the broken cert in window mode',
        seconds('--window', 10),
        120,
      )
      .option(
        '--observe-timeout <seconds>',
        'how long to wait for the failure',
        seconds('--observe-timeout', 10),
        180,
      ),
    { gates: true },
  )
    .addOption(options.md())
    .action(
      act(async ({ opts, log, cmd }: Run<Opts>) => {
        if (opts.mode === 'expired' && cmd.getOptionValueSource('window') === 'cli')
          throw new InputError('--window', 'only applies to --mode window');
        const inv = await inventoryOrLab(opts, log, false);
        const report = await certExpiryDrill(
          inv,
          stateDirFrom(opts),
          {
            target: opts.target,
            mode: opts.mode,
            windowS: opts.window,
            observeTimeoutMs: opts.observeTimeout * 1000,
            ...connection(opts),
          },
          log,
        );
        const md = drillMarkdown(report);
        if (opts.md) writeFileSync(opts.md, md);
        if (opts.json) printJson(report);
        else process.stdout.write(md);
        return report.recovered ? 0 : 1;
      }),
    );
}
