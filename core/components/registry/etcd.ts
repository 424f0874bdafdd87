import { etcdModel } from '../models/etcd.ts';
import { etcdHealthGate } from './gates.ts';
import { etcdBinary } from './binaries.ts';
import type { ComponentSpec } from './types.ts';
import { ETCD_CLIENT_PORT, ETCD_PEER_PORT } from '../../../lib/constants.ts';

export const etcd = {
  name: 'etcd',
  role: 'etcd',
  binaries: {
    // Both etcd module roots are main packages (server/v3 is etcd's own wrapper around etcdmain.Main).
    etcd: etcdBinary(
      'go.etcd.io/etcd/server/v3',
      'etcd Version:',
      ['--version'],
      'runs as the etcd unit',
    ),
    etcdctl: etcdBinary(
      'go.etcd.io/etcd/etcdctl/v3',
      'etcdctl version:',
      ['version'],
      'the etcd gate and snapshots, on etcd hosts',
    ),
    // Offline snapshot status and restore (etcdctl's were removed in 3.6).
    etcdutl: etcdBinary(
      'go.etcd.io/etcd/etcdutl/v3',
      'etcdutl version:',
      ['version'],
      'snapshot verify and restore',
    ),
  },
  model: etcdModel,
  // Its own module (flags/analyzer/etcd): etcd's dependency versions, not Kubernetes' build list.
  flagTarget: {
    dir: 'etcd',
    patterns: ['go.etcd.io/etcd/server/v3/etcdmain'],
    root: 'go.etcd.io/etcd/server/v3/etcdmain.newConfig',
    entry: 'go.etcd.io/etcd/server/v3/etcdmain.Main',
    stdFlag: true,
    appPkg: 'go.etcd.io/etcd/server/v3/etcdmain',
  },
  gate: etcdHealthGate,
  listens: [
    { port: ETCD_CLIENT_PORT, why: 'clients (--listen-client-urls)' },
    { port: ETCD_PEER_PORT, why: 'peers (--listen-peer-urls)' },
  ],
  order: 10,
  stage: 'etcd',
  upgradeStep: 'etcd',
} as const satisfies ComponentSpec<'etcd'>;
