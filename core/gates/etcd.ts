// etcd gate: every member healthy over mTLS with the healthcheck-client cert, and the member list
// equals the inventory.
import { StepError } from '../../lib/errors.ts';
import type { Inventory } from '../inventory/load.ts';
import type { ReadSession as Session } from '../transport/index.ts';
import { BIN_DIR, ETCD_CLIENT_PORT, PKI_DIR as PKI } from '../../lib/constants.ts';
import { POLL_MS } from './wait.ts';
import { retry } from '../../lib/retry.ts';
import { journalTail } from './journal.ts';

export function etcdctlArgv(inv: Inventory, ...cmd: string[]): string[] {
  return etcdctlAt(
    inv.etcdHosts.map((h) => `https://${h.address}:${ETCD_CLIENT_PORT}`),
    ...cmd,
  );
}

/** etcdctl against these endpoints, with the health-check client's cert. */
function etcdctlAt(endpoints: string[], ...cmd: string[]): string[] {
  return [
    `${BIN_DIR}/etcdctl`,
    `--endpoints=${endpoints.join(',')}`,
    `--cacert=${PKI}/etcd/ca.crt`,
    `--cert=${PKI}/etcd/healthcheck-client.crt`,
    `--key=${PKI}/etcd/healthcheck-client.key`,
    '--dial-timeout=3s',
    '--command-timeout=5s',
    ...cmd,
  ];
}

export interface EtcdHealth {
  members: string[];
  healthy: string[];
}

/** `endpoints`: one per etcd host, where to ask it (default: its address; flags prove asks a member where its run's flags advertise it). */
export async function checkEtcd(
  inv: Inventory,
  s: Session,
  endpoints = inv.etcdHosts.map((h) => `https://${h.address}:${ETCD_CLIENT_PORT}`),
): Promise<EtcdHealth> {
  // Both questions at once: one round trip instead of two.
  const [h, m] = await Promise.all([
    s.exec(etcdctlAt(endpoints, 'endpoint', 'health', '-w', 'json'), {
      allowFail: true,
      timeoutMs: 20_000,
    }),
    s.exec(etcdctlAt(endpoints, 'member', 'list', '-w', 'json'), {
      allowFail: true,
      timeoutMs: 20_000,
    }),
  ]);
  const health = JSON.parse(h.stdout || '[]') as {
    endpoint: string;
    health: boolean;
    error?: string;
  }[];
  const bad = health.filter((e) => !e.health);
  if (health.length !== inv.etcdHosts.length || bad.length > 0) {
    throw new Error(
      `unhealthy: ${bad.map((b) => `${b.endpoint} (${b.error ?? 'no answer'})`).join(', ') || h.stderr.trim().split('\n').pop()}`,
    );
  }
  if (m.code !== 0) throw new Error(`member list failed: ${m.stderr.trim().split('\n').pop()}`);
  const members = ((JSON.parse(m.stdout) as { members?: { name?: string }[] }).members ?? [])
    .map((x) => x.name ?? '')
    .sort();
  const want = inv.etcdHosts.map((x) => x.name).sort();
  if (members.join() !== want.join())
    throw new Error(`member list is [${members.join(', ')}], inventory says [${want.join(', ')}]`);
  return { members, healthy: health.map((e) => e.endpoint) };
}

/** Waits for etcd health, asked from `via`; on timeout names the unhealthy hosts with their journals. */
export async function etcdGate(
  inv: Inventory,
  via: Session,
  sessions: Map<string, Session>,
  timeoutMs: number,
): Promise<EtcdHealth> {
  try {
    return await retry(() => checkEtcd(inv, via), {
      timeoutMs,
      intervalMs: POLL_MS,
      startBeforeDeadline: true,
    });
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    const suspect = inv.etcdHosts.find((h) => msg.includes(h.address)) ?? inv.etcdHosts[0]!;
    const s = sessions.get(suspect.name);
    const detail = s ? await journalTail(s, 'etcd') : [];
    throw new StepError(
      'gate etcd',
      `etcd not healthy after ${timeoutMs / 1000}s: ${msg} (journal of etcd on ${suspect.name} below)`,
      { host: suspect.name, detail },
    );
  }
}
