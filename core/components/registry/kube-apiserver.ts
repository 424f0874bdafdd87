import { apiserverModel } from '../models/kube-apiserver.ts';
import { readyzGate } from './gates.ts';
import { kubeBinary } from './binaries.ts';
import { kubeCommand, type ComponentSpec } from './types.ts';
import { APISERVER_PORT } from '../../../lib/constants.ts';

export const kubeApiserver = {
  name: 'kube-apiserver',
  role: 'control-plane',
  binaries: { 'kube-apiserver': kubeBinary('kube-apiserver', 'runs as the kube-apiserver unit') },
  model: apiserverModel,
  flagTarget: kubeCommand('.', 'kube-apiserver', 'NewAPIServerCommand'),
  gate: readyzGate,
  listens: [{ port: APISERVER_PORT, why: '--secure-port' }],
  order: 20,
  // A co-located etcd first, so a host reboot does not start the apiserver against a dead local member.
  after: ['etcd'],
  // etcd is Type=notify: systemd starts the apiserver the moment its local member is ready.
  queueFreshStart: true,
  stage: 'kube-apiserver',
  upgradeStep: 'kube-apiserver',
} as const satisfies ComponentSpec<'kube-apiserver'>;
