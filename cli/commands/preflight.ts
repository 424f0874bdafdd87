import { act, topCommand, type Cli, type Run } from '../command.ts';
import { hostOptions, options, type HostOpts, type InventoryOpts } from '../common.ts';
import { hostContext } from '../lab-inventory.ts';
import { runPhases } from '../../core/apply/phase.ts';
import { connectPhase } from '../../core/apply/phases/connect.ts';
import { preflightPhase } from '../../core/apply/phases/preflight.ts';
import { printJson } from '../../lib/log.ts';
import type { CheckResult } from '../../core/preflight/checks.ts';

const HELP = `
usage: hardwire preflight [--inventory FILE] [--state-dir DIR] [--accept-new-host-keys] [--quiet] [--json]

Reads every host over SSH, read-only, as wire does before it writes anything (modeled on kubeadm's
preflight, cmd/kubeadm/app/preflight/checks.go; each check cites the one it follows): OS and kernel,
architecture, systemd as PID 1, cgroup version and controllers, swap, ip_forward and
bridge-nf-call-iptables, overlay and br_netfilter, the ports each component binds (held by another
process), clock skew against this machine, free disk on /var/lib, CPUs and memory on control-plane
hosts, and the commands wire runs. On a host with its own kernel, the sysctls and modules wire sets
itself (/etc/sysctl.d, /etc/modules-load.d) are reported, not failed.
Prints every check; each failing one is a line naming the host, what is wrong and the fix, and the
exit code is 2. --json: every check, with what was read and what it follows.
`;

interface Opts extends InventoryOpts, HostOpts {
  json?: boolean;
}

function table(results: CheckResult[]): string {
  const w = Math.max(...results.map((r) => r.host.length + r.check.length)) + 3;
  return results
    .map((r) => {
      const state = r.ok ? (r.wireSets ? 'wire sets it' : 'ok') : 'FAIL';
      return `${`${r.host}  ${r.check}`.padEnd(w)} ${state.padEnd(12)} ${r.value}`;
    })
    .join('\n');
}

export function declare(root: Cli): Cli {
  const cmd = topCommand(
    root,
    'preflight',
    'read every host (cgroups, swap, sysctls, ports, clock, disk, ...) and say what would stop wire',
    HELP,
  )
    .addOption(options.inventory())
    .addOption(options.stateDir());
  return hostOptions(cmd, { gates: false })
    .addOption(options.json())
    .action(
      act(async ({ opts, log }: Run<Opts>) => {
        const ctx = await hostContext(opts, log, true);
        try {
          await runPhases([connectPhase, preflightPhase], ctx);
        } finally {
          const results = ctx.preflight ?? [];
          if (opts.json) printJson({ ok: results.every((r) => r.ok), checks: results });
          else if (results.length > 0) process.stdout.write(`${table(results)}\n`);
        }
        return 0;
      }),
    );
}
