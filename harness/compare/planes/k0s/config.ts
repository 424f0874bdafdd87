// k0s.yaml for one controller, with the cluster parameters every plane is built with.
import { stringify } from 'yaml';
import { APISERVER_PORT } from '../../../../lib/constants.ts';
import type { ClusterParams } from '../../types.ts';

export const K0S_DATA = '/var/lib/k0s';
export const K0S_CONFIG = '/etc/k0s/k0s.yaml';
export const K0S_BIN = '/usr/local/bin/k0s';

/** Everything else stays k0s's default (konnectivity, metrics-server, kube-proxy, CoreDNS on). */
export function k0sConfig(p: ClusterParams, address: string): string {
  return stringify({
    apiVersion: 'k0s.k0sproject.io/v1beta1',
    kind: 'ClusterConfig',
    metadata: { name: p.clusterName },
    spec: {
      api: { address, port: APISERVER_PORT, ...(p.extraSANs.length ? { sans: p.extraSANs } : {}) },
      network: { serviceCIDR: p.serviceCIDR, podCIDR: p.podCIDR, clusterDomain: p.dnsDomain },
      storage: { type: 'etcd' },
    },
  });
}
