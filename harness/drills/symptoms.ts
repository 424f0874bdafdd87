// What a user of the cluster sees when a control-plane component breaks, probed from outside.
// Each probe returns a sentence while the symptom shows, and undefined once it does not.
import { checkApiserver } from '../../core/gates/apiserver.ts';
import { checkEtcd } from '../../core/gates/etcd.ts';
import { readLease } from '../../core/gates/leases.ts';
import { kubeRequest, withServer, type KubeCreds } from '../../core/transport/kube-api.ts';
import { LEASES, type ComponentName } from '../../core/components/registry/index.ts';
import type { Inventory } from '../../core/inventory/load.ts';
import type { ReadSession } from '../../core/transport/index.ts';
import { APISERVER_PORT } from '../../lib/constants.ts';

export type SymptomKind =
  | 'lease-not-renewing'
  | 'readyz-etcd-failing'
  | 'apiserver-tls-rejected'
  | 'etcd-unhealthy';

export interface SymptomProbe {
  inv: Inventory;
  creds: KubeCreds;
  /** A session on an etcd host, for etcdctl. */
  via: ReadSession;
  /** The broken component. */
  component: ComponentName;
}

export const errText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The component's Lease in kube-system, from the registry. */
export function leaseOf(component: ComponentName): string {
  const l = LEASES.find((x) => x.component === component);
  if (!l) throw new Error(`${component} elects no leader, so it has no Lease`);
  return l.lease;
}

/** Each apiserver's /readyz, when it fails on etcd or the apiserver does not answer at all. */
export async function readyzEtcd(inv: Inventory, creds: KubeCreds): Promise<string | undefined> {
  const bad: string[] = [];
  for (const h of inv.controlPlaneHosts) {
    try {
      const r = await kubeRequest(
        withServer(creds, `https://${h.address}:${APISERVER_PORT}`),
        'GET',
        '/readyz?verbose',
        { timeoutMs: 5000 },
      );
      const failing = r.body.split('\n').filter((l) => l.startsWith('[-]'));
      if (r.status !== 200 && failing.some((l) => l.includes('etcd')))
        bad.push(`${h.name} /readyz ${r.status}: ${failing.join('; ')}`);
    } catch (e) {
      bad.push(
        `${h.name} /readyz unreachable (${errText(e)}): kube-apiserver cannot reach its storage, so it does not serve`,
      );
    }
  }
  return bad.length > 0 ? bad.join(' | ') : undefined;
}

export async function symptomNow(kind: SymptomKind, p: SymptomProbe): Promise<string | undefined> {
  switch (kind) {
    case 'lease-not-renewing': {
      const lease = leaseOf(p.component);
      const l = await readLease(p.creds, lease);
      const age = Date.now() - new Date(l.renewTime).getTime();
      // The default renew period is 2 s and lease duration 15 s: 15 s without a renewal is a dead leader.
      return age > 15_000
        ? `Lease kube-system/${lease} held by ${l.holder || 'nobody (released)'}, last renewed ${l.renewTime} (${Math.round(age / 1000)} s ago; renews every 2 s when healthy)`
        : undefined;
    }
    case 'readyz-etcd-failing':
      return readyzEtcd(p.inv, p.creds);
    case 'apiserver-tls-rejected': {
      const bad: string[] = [];
      for (const h of p.inv.controlPlaneHosts) {
        try {
          await checkApiserver(p.creds, h.address);
        } catch (e) {
          if (/certificate|x509|CERT_/i.test(errText(e))) bad.push(`${h.name}: ${errText(e)}`);
        }
      }
      return bad.length > 0
        ? `hardwire's own client rejects the serving cert: ${bad.join('; ')}`
        : undefined;
    }
    case 'etcd-unhealthy':
      try {
        await checkEtcd(p.inv, p.via);
        return undefined;
      } catch (e) {
        return `etcd: ${errText(e)}`;
      }
  }
}
