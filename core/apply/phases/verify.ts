import type { Phase } from '../phase.ts';
import { session, type WireContext } from '../context.ts';
import { adminCreds } from '../creds.ts';
import { runGateChecks } from '../../gates/checks.ts';
import { smoke, timed, type CheckResult } from '../../gates/smoke.ts';
import { probeChecks } from '../../gates/pods.ts';
import { addonChecks } from '../../gates/addons.ts';
import { encryptionKeys, writePrefix } from '../../pki/encryption.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface VerifyReport {
  gates: CheckResult[];
  smoke: CheckResult[];
}

/**
 * verify's gates without its smoke test (which writes): each component's own checks, all at once as
 * a drill's baseline runs them (each controller host's check watches its unit for 2 s: one after
 * another they took 4 s per host), then the workload's and the opt-in addons' (none without workers), in order.
 */
export async function verifyGates(ctx: WireContext): Promise<CheckResult[]> {
  const gates = await runGateChecks(ctx);
  for (const check of [...probeChecks(ctx), ...addonChecks(ctx)])
    gates.push(await timed(check.name, check.run));
  return gates;
}

export function verifyPhase(report: VerifyReport): Phase {
  return {
    id: 'verify',
    title: 'Re-run every gate, then the API smoke test through admin.conf',
    async run(ctx: WireContext) {
      report.gates.push(...(await verifyGates(ctx)));
      report.smoke.push(
        ...(await smoke(
          adminCreds(ctx.clusterDir),
          ctx.inv,
          session(ctx, ctx.inv.etcdHosts[0]!.name),
          writePrefix(
            encryptionKeys(
              readFileSync(join(ctx.clusterDir, 'pki', 'encryption-config.yaml'), 'utf8'),
            )!,
          ),
        )),
      );
      for (const r of [...report.gates, ...report.smoke])
        ctx.log.info(`  ${r.ok ? 'ok  ' : 'FAIL'} ${r.name}: ${r.detail}`);
    },
  };
}
