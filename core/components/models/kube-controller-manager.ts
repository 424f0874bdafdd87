import { flag, PKI, K, BIN, type ModelContext, type UnitModel } from './types.ts';

export function controllerManagerModel({ inv }: ModelContext): UnitModel {
  const conf = `${K}/controller-manager.conf`;
  return {
    component: 'kube-controller-manager',
    description: 'Kubernetes controller manager (hardwire)',
    documentation:
      'https://kubernetes.io/docs/reference/command-line-tools-reference/kube-controller-manager/',
    type: 'simple',
    binary: `${BIN}/kube-controller-manager`,
    flags: [
      flag('allocate-node-cidrs', true, 'hand each Node a pod CIDR slice out of --cluster-cidr'),
      flag('authentication-kubeconfig', conf, 'delegated authn for its own /metrics and /healthz'),
      flag('authorization-kubeconfig', conf, 'delegated authz for its own /metrics and /healthz'),
      flag('bind-address', '127.0.0.1', 'serve its secure port on loopback only'),
      flag('client-ca-file', `${PKI}/ca.crt`, 'client certs it accepts on its own secure port'),
      flag('cluster-cidr', inv.cluster.podCIDR, 'the pod network range'),
      flag(
        'cluster-name',
        inv.cluster.name,
        'kubeadm and KTHW set it; it names cloud resources, and the cloud controllers that read it are no longer in kube-controller-manager, so here it is only copied',
      ),
      flag(
        'cluster-signing-cert-file',
        `${PKI}/ca.crt`,
        'CSR signer: certs approved through the API are signed by the cluster CA',
      ),
      flag(
        'cluster-signing-key-file',
        `${PKI}/ca.key`,
        'CSR signer key; this is why ca.key lives on control-plane hosts',
      ),
      flag(
        'kubeconfig',
        conf,
        'its identity toward the apiserver (system:kube-controller-manager)',
      ),
      flag(
        'leader-elect',
        true,
        'only one replica acts at a time; holds the kube-system/kube-controller-manager Lease',
      ),
      flag(
        'profiling',
        false,
        'no /debug/pprof on its secure port: profiles expose internals and cost CPU on demand (CIS 1.3.2)',
      ),
      flag(
        'requestheader-client-ca-file',
        `${PKI}/front-proxy-ca.crt`,
        'trust front-proxy headers on its own port',
      ),
      flag(
        'root-ca-file',
        `${PKI}/ca.crt`,
        'published to pods as ca.crt in service-account token volumes',
      ),
      flag(
        'service-account-private-key-file',
        `${PKI}/sa.key`,
        'signs legacy service-account token Secrets',
      ),
      flag('service-cluster-ip-range', inv.cluster.serviceCIDR, "must match the apiserver's range"),
      flag(
        'use-service-account-credentials',
        true,
        'each controller uses its own service account, so RBAC can scope them',
      ),
    ],
  };
}
