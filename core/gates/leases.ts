// Leader-election gate: the component's Lease in kube-system is held and its renewTime advances.
import { StepError } from '../../lib/errors.ts';
import { kubeJson, type KubeCreds } from '../transport/kube-api.ts';
import { API_POLL_MS } from './wait.ts';
import { orAbort, retry } from '../../lib/retry.ts';
import { setTimeout as sleep } from 'node:timers/promises';

export interface LeaseState {
  holder: string;
  renewTime: string;
  /** How long before the apiserver's own clock (its Date header, whole seconds) the Lease was renewed. */
  ageMs: number;
}

/** The leader renews every --leader-elect-retry-period (default 2 s, both controllers). */
export const RENEW_INTERVAL_MS = 2000;

const leasePath = (name: string) =>
  `/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/${name}`;

export async function readLease(creds: KubeCreds, name: string): Promise<LeaseState> {
  const { json, serverTime } = await kubeJson<{
    spec?: { holderIdentity?: string; renewTime?: string };
  }>(creds, 'GET', leasePath(name));
  const renewTime = json.spec?.renewTime ?? '';
  return {
    holder: json.spec?.holderIdentity ?? '',
    renewTime,
    ageMs: serverTime - Date.parse(renewTime),
  };
}

/** What the Lease said just before a fresh start: its renewTime, '' when it did not exist. */
export interface LeaseMark {
  renewTime: string;
}

/** The Lease's mark, or undefined when it cannot be read (then the gate waits for a renewal). */
export async function markLease(creds: KubeCreds, name: string): Promise<LeaseMark | undefined> {
  try {
    const { status, json } = await kubeJson<{ spec?: { renewTime?: string } }>(
      creds,
      'GET',
      leasePath(name),
      { allow: [404] },
    );
    return { renewTime: status === 404 ? '' : (json.spec?.renewTime ?? '') };
  } catch {
    return undefined;
  }
}

/**
 * Held and renewing. With `recentCounts` (nothing was restarted: a no-op run, verify), a renewal
 * within one renew interval of the apiserver's own clock (plus 1 s for its Date header's whole
 * seconds) already proves it. After a restart it does not: the restarted process may have been the
 * leader, whose last renewal is still recent while nobody holds the Lease any more, so the gate
 * watches for a renewal made after it started. With `since` (read just before a fresh start, when no
 * instance ran on the started hosts), any renewal or acquisition made after that read is by a process
 * alive after it: a new leader's first acquisition counts, without waiting for its next renewal.
 */
export async function checkLeaseRenewing(
  creds: KubeCreds,
  name: string,
  windowMs = 6000,
  recentCounts = true,
  since?: LeaseMark,
): Promise<LeaseState> {
  const a = await readLease(creds, name);
  if (!a.holder) throw new Error(`Lease kube-system/${name} has no holder`);
  if (since && a.renewTime !== since.renewTime) return a;
  if (recentCounts && a.ageMs <= RENEW_INTERVAL_MS + 1000) return a;
  const notRenewed = new Error(
    `Lease kube-system/${name} held by ${a.holder} but not renewed since ${a.renewTime}`,
  );
  // Each look waits first: `a` was just read.
  return retry(
    async () => {
      await sleep(API_POLL_MS);
      const b = await orAbort(readLease(creds, name));
      if (b.holder && b.renewTime !== a.renewTime) return b;
      throw notRenewed;
    },
    { timeoutMs: windowMs, intervalMs: 0 },
  );
}

export async function leaseGate(
  creds: KubeCreds,
  name: string,
  timeoutMs: number,
  journal: () => Promise<{ host: string; lines: string[] }>,
  recentCounts = false,
  since?: LeaseMark,
): Promise<LeaseState> {
  try {
    return await retry(() => checkLeaseRenewing(creds, name, 6000, recentCounts, since), {
      timeoutMs,
      intervalMs: API_POLL_MS,
      startBeforeDeadline: true,
    });
  } catch (err) {
    const j = await journal();
    throw new StepError(
      `gate ${name}`,
      `${err instanceof Error ? err.message : String(err)} after ${timeoutMs / 1000}s`,
      { host: j.host, detail: j.lines },
    );
  }
}
