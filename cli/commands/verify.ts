import { act, topCommand, type Cli, type Run } from '../command.ts';
import { hostOptions, options, type HostOpts, type InventoryOpts } from '../common.ts';
import { hostContext } from '../lab-inventory.ts';
import { runPhases } from '../../core/apply/phase.ts';
import { connectPhase } from '../../core/apply/phases/connect.ts';
import { verifyPhase, type VerifyReport } from '../../core/apply/phases/verify.ts';
import { printJson } from '../../lib/log.ts';
import { DEFAULT_GATE_TIMEOUT_MS } from '../../lib/constants.ts';

const HELP = `
usage: hardwire verify [--inventory FILE] [--state-dir DIR] [--gate-timeout SECONDS] [--accept-new-host-keys] [--quiet] [--json]

Gates: etcd health over mTLS and member list; each apiserver's /livez and /readyz; the
controller-manager and scheduler Leases held and renewing. Smoke test through admin.conf:
namespace + ConfigMap; a Deployment whose ReplicaSet and Pods carry ownerReferences; a CRD with
a CEL rule rejecting a bad object; a server-side apply conflict; a watch; a Secret that reads
back while etcd holds it encrypted with the first key of the encryption config (k8s:enc:secretbox:v1:key1: on a new cluster, checked with etcdctl). Cleans up after.
--gate-timeout: how long each gate waits, in seconds (default ${DEFAULT_GATE_TIMEOUT_MS / 1000}).
Exit 1 if any check fails.
`;

interface Opts extends InventoryOpts, HostOpts {
  json?: boolean;
}

export function declare(root: Cli): Cli {
  const verify = topCommand(
    root,
    'verify',
    're-run every wire gate and an API smoke test (CRD+CEL, SSA conflict, watch, encrypted Secret)',
    HELP,
  )
    .addOption(options.inventory())
    .addOption(options.stateDir());
  return hostOptions(verify, { gates: true })
    .addOption(options.json())
    .action(
      act(async ({ opts, log }: Run<Opts>) => {
        const ctx = await hostContext(opts, log, false);
        const report: VerifyReport = { gates: [], smoke: [] };
        await runPhases([connectPhase, verifyPhase(report)], ctx);
        const all = [...report.gates, ...report.smoke];
        const failed = all.filter((r) => !r.ok);
        // An empty list proves nothing: no gate ran is a failure too.
        const ok = all.length > 0 && failed.length === 0;
        if (opts.json) printJson({ ok, ...report });
        if (ok) return 0;
        // The last line names the failing check, so the cause survives in a CI log's tail.
        const why = failed.length
          ? failed.map((r) => `${r.name}: ${r.detail}`).join('; ')
          : 'no gate or check ran';
        process.stderr.write(
          `error: verify: ${failed.length ? `${failed.length} failed: ` : ''}${why}\n`,
        );
        return 1;
      }),
    );
}
