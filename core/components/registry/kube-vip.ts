import { kubeVipModel, KUBE_VIP_LEASE } from '../models/kube-vip.ts';
import { kubeVipGate } from './gates.ts';
import type { ComponentSpec } from './types.ts';

export const kubeVip = {
  name: 'kube-vip',
  // The control-plane hosts, when the inventory sets cluster.apiServerVip.
  role: 'vip',
  binaries: {
    'kube-vip': {
      group: 'kube-vip',
      goPackage: 'github.com/kube-vip/kube-vip',
      probe: { args: ['version'], expect: (v) => `Version:  ${v}` },
      why: 'runs as the kube-vip unit: holds the API virtual address on one control-plane host at a time',
    },
  },
  model: kubeVipModel,
  kubeconfig: {
    id: 'kube-vip',
    file: 'kube-vip.conf',
    cn: 'system:kube-vip',
    o: [],
    server: 'local',
    why: 'its Lease only: a Role in kube-system that wire binds (apply/phases/rbac.ts); bind-mounted over the admin.conf it insists on reading',
    authorizedBy: { by: 'wire', binding: 'hardwire:kube-vip' },
  },
  gate: kubeVipGate,
  // After its own host's apiserver (it elects through it), before anything that needs the VIP.
  listens: [{ port: 2112, why: 'Prometheus metrics (--prometheusHTTPServer), on 127.0.0.1' }],
  order: 25,
  after: ['kube-apiserver'],
  stage: 'vip',
  upgradeStep: 'kube-apiserver',
  lease: KUBE_VIP_LEASE,
} as const satisfies ComponentSpec<'kube-vip'>;
