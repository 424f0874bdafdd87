// The gate of an etcd hop: every member healthy (wire's etcd gate), and the member just restarted
// reporting the hop's version, read from etcd itself (`etcdctl endpoint status` of that member).
import type { WireContext } from '../../apply/context.ts';
import { session } from '../../apply/context.ts';
import { etcdctlArgv, etcdGate } from '../../gates/etcd.ts';
import { POLL_MS } from '../../gates/wait.ts';
import { retry } from '../../../lib/retry.ts';
import { ETCD_CLIENT_PORT } from '../../../lib/constants.ts';
import type { Inventory } from '../../inventory/load.ts';
import type { ReadSession } from '../../transport/index.ts';

/** Each member's version as etcd reports it ("v3.6.8"), by host name; a member that does not answer is absent. */
export async function memberVersions(inv: Inventory, s: ReadSession): Promise<Map<string, string>> {
  const r = await s.exec(etcdctlArgv(inv, 'endpoint', 'status', '-w', 'json'), {
    allowFail: true,
    timeoutMs: 20_000,
  });
  const out = new Map<string, string>();
  for (const e of JSON.parse(r.stdout || '[]') as {
    Endpoint: string;
    Status?: { version?: string };
  }[]) {
    const h = inv.etcdHosts.find((x) => e.Endpoint === `https://${x.address}:${ETCD_CLIENT_PORT}`);
    if (h && e.Status?.version) out.set(h.name, `v${e.Status.version}`);
  }
  return out;
}

export async function etcdMemberGate(
  ctx: WireContext,
  host: string,
  version: string | undefined,
): Promise<void> {
  await etcdGate(ctx.inv, session(ctx, host), ctx.sessions, ctx.opts.gateTimeoutMs);
  if (version === undefined) return;
  await retry(
    async () => {
      const got = (await memberVersions(ctx.inv, session(ctx, host))).get(host);
      if (got !== version)
        throw new Error(`etcd reports member ${host} at ${got ?? 'no version'}, not ${version}`);
    },
    { timeoutMs: ctx.opts.gateTimeoutMs, intervalMs: POLL_MS },
  );
  ctx.log.info(`  etcd member ${host} healthy at ${version}`);
}
