// 3.C3's load and its measurements: one HTTPS request with its status, latency and the APF
// response headers; a bounded flood (a fixed count, a deadline, a socket cap); and the APF
// counters of an apiserver's /metrics. Kept apart from apf.ts, which sets up and reports.
import { Agent, request } from 'node:https';
import type { KubeCreds } from '../../../core/transport/kube-api.ts';

export interface Timed {
  status: number;
  ms: number;
  at: string;
  fsUid?: string;
  plUid?: string;
  body: string;
}

export function timedRequest(
  creds: KubeCreds,
  path: string,
  agent?: Agent,
  timeoutMs = 15_000,
): Promise<Timed> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const req = request(
      new URL(path, creds.server),
      {
        ca: creds.ca,
        cert: creds.cert,
        key: creds.key,
        agent,
        timeout: timeoutMs,
        headers: { accept: 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const h = (n: string) => {
            const v = res.headers[n];
            return typeof v === 'string' ? v : undefined;
          };
          const fs = h('x-kubernetes-pf-flowschema-uid');
          const pl = h('x-kubernetes-pf-prioritylevel-uid');
          resolve({
            status: res.statusCode ?? 0,
            ms: Date.now() - t0,
            at: new Date(t0).toISOString(),
            ...(fs ? { fsUid: fs } : {}),
            ...(pl ? { plUid: pl } : {}),
            body: Buffer.concat(chunks).toString('utf8').slice(0, 300),
          });
        });
      },
    );
    // A request that never got an answer is status 0: counted, not thrown.
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) =>
      resolve({ status: 0, ms: Date.now() - t0, at: new Date(t0).toISOString(), body: e.message }),
    );
    req.end();
  });
}

export interface FloodResult {
  sent: number;
  byStatus: Record<string, number>;
  first429?: Timed;
  ms: number;
  latencyMs: { p50: number; max: number };
}

export interface FloodBounds {
  count: number;
  sockets: number;
  deadlineMs: number;
}

/**
 * GETs of `path`, at most `sockets` in flight, until `done()` says what the drill needs has been
 * seen; bounded whatever `done` says: at most `count`, none started after `deadlineMs`.
 */
export async function flood(
  creds: KubeCreds,
  path: string,
  b: FloodBounds,
  done: () => boolean,
): Promise<FloodResult & { results: Timed[] }> {
  const { count, sockets, deadlineMs } = b;
  const agent = new Agent({ keepAlive: true, maxSockets: sockets });
  const t0 = Date.now();
  const results: Timed[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count && Date.now() - t0 < deadlineMs && !done()) {
      next++;
      results.push(await timedRequest(creds, path, agent));
    }
  };
  await Promise.all(Array.from({ length: sockets }, worker));
  agent.destroy();
  const byStatus: Record<string, number> = {};
  for (const r of results) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
  const first429 = results
    .filter((r) => r.status === 429)
    .sort((a, b) => a.at.localeCompare(b.at))[0];
  return {
    sent: results.length,
    byStatus,
    ...(first429 ? { first429 } : {}),
    ms: Date.now() - t0,
    latencyMs: stats(results.map((r) => r.ms)),
    results,
  };
}

export function stats(ms: number[]): { p50: number; max: number } {
  const s = [...ms].sort((a, b) => a - b);
  return { p50: s[Math.floor(s.length / 2)] ?? 0, max: s.at(-1) ?? 0 };
}

/** Sum of an APF counter over the series whose labels include all of `labels`. */
export function metricSum(
  metricsText: string,
  name: string,
  labels: Record<string, string>,
): number {
  let sum = 0;
  for (const line of metricsText.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const close = line.lastIndexOf('}');
    const lbl = line.slice(name.length + 1, close);
    if (Object.entries(labels).every(([k, v]) => lbl.includes(`${k}="${v}"`)))
      sum += Number(line.slice(close + 1).trim());
  }
  return sum;
}
