// A client beside a roll, for test/upgrade-apply.test.ts and scripts/bench-rolling.ts: writes and
// reads back one ConfigMap per tick on a ready apiserver, retrying on another, while it samples each
// apiserver's /readyz. stop() says how many writes were acknowledged, how many of those are gone, and
// the longest time no apiserver was ready. Read with the admin credentials, independently of the
// code under test.
import { kubeRequest, withServer, type KubeCreds } from '../core/transport/kube-api.ts';

/** maxNotReady: the most apiservers seen not ready in one sample (1 when they restart one at a time). */
/** A /readyz that answers slowly on a busy machine is still an answer: each sample waits up to 5 s. */
/** sent and failed count write attempts; retried, those on a second or later apiserver for one write. */
export interface LoadReport {
  sent: number;
  failed: number;
  retried: number;
  acked: number;
  lost: string[];
  longestNoneMs: number;
  maxNotReady: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startLoad(
  creds: KubeCreds,
  addresses: string[],
  ns: string,
  rateHz = 10,
): Promise<{ stop(): Promise<LoadReport> }> {
  const servers = addresses.map((a) => withServer(creds, `https://${a}:6443`));
  const made = await kubeRequest(creds, 'POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
  });
  if (made.status !== 201 && made.status !== 409)
    throw new Error(`namespace ${ns}: ${made.status} ${made.body}`);
  const ready = servers.map(() => true);
  let noneSince: number | undefined;
  let longestNoneMs = 0;
  let maxNotReady = 0;
  let stop = false;
  const readyLoop = (async () => {
    while (!stop) {
      await Promise.all(
        servers.map(async (s, i) => {
          ready[i] = await kubeRequest(s, 'GET', '/readyz', { timeoutMs: 5000 }).then(
            (r) => r.status === 200,
            () => false,
          );
        }),
      );
      const now = Date.now();
      maxNotReady = Math.max(maxNotReady, ready.filter((r) => !r).length);
      if (ready.some(Boolean)) {
        if (noneSince !== undefined) longestNoneMs = Math.max(longestNoneMs, now - noneSince);
        noneSince = undefined;
      } else noneSince ??= now;
      await sleep(200);
    }
  })();
  let sent = 0;
  let failed = 0;
  let retried = 0;
  let seq = 0;
  const acked: string[] = [];
  const clientLoop = (async () => {
    while (!stop) {
      const id = `cm-${seq++}`;
      const order = servers
        .map((_, i) => i)
        .sort(
          (a, b) =>
            Number(ready[b]) - Number(ready[a]) ||
            ((a + seq) % servers.length) - ((b + seq) % servers.length),
        );
      for (const [attempt, i] of order.entries()) {
        sent++;
        if (attempt > 0) retried++;
        const w = await kubeRequest(servers[i]!, 'POST', `/api/v1/namespaces/${ns}/configmaps`, {
          timeoutMs: 3000,
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: id }, data: { seq: id } },
        }).catch(() => undefined);
        // 409: an earlier attempt landed though its answer was lost; the read below decides.
        if (w?.status === 201 || w?.status === 409) {
          const r = await kubeRequest(
            servers[i]!,
            'GET',
            `/api/v1/namespaces/${ns}/configmaps/${id}`,
            { timeoutMs: 3000 },
          ).catch(() => undefined);
          if (r?.status === 200) {
            acked.push(id);
            break;
          }
        }
        failed++;
      }
      await sleep(1000 / rateHz);
    }
  })();
  return {
    async stop() {
      stop = true;
      await Promise.all([readyLoop, clientLoop]);
      if (noneSince !== undefined) longestNoneMs = Math.max(longestNoneMs, Date.now() - noneSince);
      const list = await kubeRequest(creds, 'GET', `/api/v1/namespaces/${ns}/configmaps`);
      const present = new Set(
        (JSON.parse(list.body) as { items: { metadata: { name: string } }[] }).items.map(
          (i) => i.metadata.name,
        ),
      );
      return {
        sent,
        failed,
        retried,
        acked: acked.length,
        lost: acked.filter((id) => !present.has(id)),
        longestNoneMs,
        maxNotReady,
      };
    },
  };
}
