import { etcdModel } from '../models/etcd.ts';
import { etcdHealthGate } from './gates.ts';
import type { ComponentSpec } from './types.ts';

export const etcd = {
  name: 'etcd',
  role: 'etcd',
  binaries: ['etcd', 'etcdctl', 'etcdutl'],
  model: etcdModel,
  gate: etcdHealthGate,
  order: 10,
  stage: 'etcd',
} as const satisfies ComponentSpec<'etcd'>;
