import type { Command } from '../command.ts';
import { parse } from '../args.ts';
import { stateDirFrom } from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { newContext } from '../../apply/context.ts';
import { runPhases } from '../../apply/phase.ts';
import { connectPhase } from '../../apply/phases/connect.ts';
import { verifyPhase, type VerifyReport } from '../../apply/phases/verify.ts';
import { clusterStateDir } from '../../pki/store.ts';
import { printJson } from '../../lib/log.ts';

export const command: Command = {
  name: 'verify',
  summary: 're-run every wire gate and an API smoke test (CRD+CEL, SSA conflict, watch, encrypted Secret)',
  help: `
usage: hardwire verify [--inventory FILE] [--state-dir DIR] [--json]

Gates: etcd health over mTLS and member list; each apiserver's /livez and /readyz; the
controller-manager and scheduler Leases held and renewing. Smoke test through admin.conf:
namespace + ConfigMap; a Deployment whose ReplicaSet and Pods carry ownerReferences; a CRD with
a CEL rule rejecting a bad object; a server-side apply conflict; a watch; a Secret that reads
back while etcd holds it encrypted (k8s:enc:aescbc:v1: checked with etcdctl). Cleans up after.
Exit 1 if any check fails.
`,
  async run({ argv, log }) {
    const { values } = parse(argv, { inventory: { type: 'string', short: 'i' }, 'state-dir': { type: 'string' }, json: { type: 'boolean' } }, false);
    const inv = await inventoryOrLab(values, log, false);
    const stateDir = stateDirFrom(values);
    const ctx = newContext(inv, stateDir, clusterStateDir(stateDir, inv), { dryRun: false, acceptNewHostKeys: false, gateTimeoutMs: 60_000 }, log);
    const report: VerifyReport = { gates: [], smoke: [] };
    await runPhases([connectPhase, verifyPhase(report)], ctx);
    const ok = [...report.gates, ...report.smoke].every((r) => r.ok);
    if (values.json) printJson({ ok, ...report });
    return ok ? 0 : 1;
  },
};
