import type { Phase } from '../phase.ts';
import { session, type WireContext } from '../context.ts';
import { adminCreds } from '../creds.ts';
import { checkEtcd } from '../../gates/etcd.ts';
import { checkApiserver } from '../../gates/apiserver.ts';
import { checkLeaseRenewing } from '../../gates/leases.ts';
import { smoke, timed, type CheckResult } from '../smoke.ts';

export interface VerifyReport { gates: CheckResult[]; smoke: CheckResult[] }

export function verifyPhase(report: VerifyReport): Phase {
  return {
    id: 'verify',
    title: 'Re-run every gate, then the API smoke test through admin.conf',
    async run(ctx: WireContext) {
      const creds = adminCreds(ctx.clusterDir);
      const via = session(ctx, ctx.inv.etcdHosts[0]!.name);
      report.gates.push(await timed('etcd: members healthy over mTLS, member list = inventory', async () => (await checkEtcd(ctx.inv, via)).members.join(', ')));
      for (const h of ctx.inv.controlPlaneHosts) {
        report.gates.push(await timed(`kube-apiserver ${h.name}: /livez and /readyz`, async () => { await checkApiserver(creds, h.address); return '200'; }));
      }
      for (const lease of ['kube-controller-manager', 'kube-scheduler']) {
        report.gates.push(await timed(`${lease}: Lease held and renewing`, async () => { const l = await checkLeaseRenewing(creds, lease); return `${l.holder} @ ${l.renewTime}`; }));
      }
      report.smoke.push(...await smoke(creds, ctx.inv, via));
      for (const r of [...report.gates, ...report.smoke]) ctx.log.info(`  ${r.ok ? 'ok  ' : 'FAIL'} ${r.name}: ${r.detail}`);
    },
  };
}
