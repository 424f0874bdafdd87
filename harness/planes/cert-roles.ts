// A certificate's role from the flag that names it on a live command line (the file --tls-cert-file
// names is the apiserver's serving cert), so that a plane laid out otherwise (k0s, a cluster of
// yours) lines up with kubeadm's names in the cert matrix, and its paths normalise to kubeadm's.
import type { ControlPlaneName, PerComponent } from '../../core/components/registry/index.ts';

export const ROLE_FLAGS: PerComponent<Record<string, string>, ControlPlaneName> = {
  'kube-apiserver': {
    'tls-cert-file': 'apiserver',
    'client-ca-file': 'ca',
    'kubelet-client-certificate': 'apiserver-kubelet-client',
    'etcd-certfile': 'apiserver-etcd-client',
    'etcd-cafile': 'etcd-ca',
    'proxy-client-cert-file': 'front-proxy-client',
    'requestheader-client-ca-file': 'front-proxy-ca',
    'service-account-key-file': 'sa',
  },
  etcd: { 'cert-file': 'etcd-server', 'peer-cert-file': 'etcd-peer', 'trusted-ca-file': 'etcd-ca' },
  'kube-controller-manager': { kubeconfig: 'kubeconfig/controller-manager' },
  'kube-scheduler': { kubeconfig: 'kubeconfig/scheduler' },
};

/** kubeadm's file for a role: etcd-server -> etcd/server.crt, kubeconfig/admin -> admin.conf. */
export function kubeadmFile(role: string): string {
  if (role.startsWith('kubeconfig/')) return `<conf>/${role.slice('kubeconfig/'.length)}.conf`;
  if (role === 'sa') return '<pki>/sa.pub';
  return `<pki>/${role.startsWith('etcd-') ? `etcd/${role.slice(5)}` : role}.crt`;
}
