// What each cert-expiry target breaks, where, and which journals show it: the drill's only
// per-target knowledge, so a new target is one entry here.
import type { ComponentName } from '../../core/components/registry/index.ts';
import type { SymptomKind } from './symptoms.ts';

export const TARGETS = [
  'kube-scheduler',
  'kube-controller-manager',
  'apiserver-etcd-client',
  'apiserver',
  'etcd-peer',
] as const;
export type Target = (typeof TARGETS)[number];
/** A cert valid for a short window, or one that has already expired. */
export type Mode = 'window' | 'expired';

export interface TargetDef {
  leafId: string;
  /** Name in certs check. */
  cert: string;
  /** The component that loads the cert. */
  component: ComponentName;
  /** Break it on every host that has it, or only on the first etcd host (a peer cert). */
  where: 'all' | 'first-etcd';
  /** Journals that log the rejection, in the order we look. */
  logUnits: ComponentName[];
  symptom: SymptomKind;
  /** Why these journals. */
  whoLogs: string;
}

const DEFS: Record<Target, TargetDef> = {
  'kube-scheduler': {
    leafId: 'kubeconfig-scheduler',
    cert: 'scheduler.conf',
    component: 'kube-scheduler',
    where: 'all',
    logUnits: ['kube-apiserver', 'kube-scheduler'],
    symptom: 'lease-not-renewing',
    whoLogs:
      'the apiserver verifies client certs per request, so the x509 error is in the kube-apiserver journal; the scheduler itself only sees 401 Unauthorized',
  },
  'kube-controller-manager': {
    leafId: 'kubeconfig-controller-manager',
    cert: 'controller-manager.conf',
    component: 'kube-controller-manager',
    where: 'all',
    logUnits: ['kube-apiserver', 'kube-controller-manager'],
    symptom: 'lease-not-renewing',
    whoLogs:
      'the apiserver verifies client certs per request, so the x509 error is in the kube-apiserver journal; the controller-manager itself only sees 401 Unauthorized',
  },
  'apiserver-etcd-client': {
    leafId: 'apiserver-etcd-client',
    cert: 'apiserver-etcd-client',
    component: 'kube-apiserver',
    where: 'all',
    logUnits: ['etcd', 'kube-apiserver'],
    symptom: 'readyz-etcd-failing',
    whoLogs:
      'etcd verifies client certs in the TLS handshake and logs the rejected connection; the apiserver only sees the handshake fail',
  },
  apiserver: {
    leafId: 'apiserver',
    cert: 'apiserver',
    component: 'kube-apiserver',
    where: 'all',
    logUnits: ['kube-scheduler', 'kube-controller-manager', 'kube-apiserver'],
    symptom: 'apiserver-tls-rejected',
    whoLogs:
      'clients verify the serving cert, so the x509 error is in the scheduler and controller-manager journals; the apiserver logs the TLS handshake error',
  },
  'etcd-peer': {
    leafId: 'etcd-peer',
    cert: 'etcd-peer',
    component: 'etcd',
    where: 'first-etcd',
    logUnits: ['etcd'],
    symptom: 'etcd-unhealthy',
    whoLogs:
      'the other members verify the peer cert in the TLS handshake and log the rejected connection',
  },
};

export function targetDef(t: Target): TargetDef {
  return DEFS[t];
}
