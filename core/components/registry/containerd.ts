import { containerdModel } from '../models/containerd.ts';
import { containerdGate } from '../../gates/node.ts';
import { WORKER_BINARIES as W } from './worker-binaries.ts';
import type { ComponentSpec } from './types.ts';

export const containerd = {
  name: 'containerd',
  role: 'worker',
  // The daemon first (its unit runs it), then what it runs: the runc shim, runc, the CNI plugins,
  // and ctr, which its ExecStartPost imports the images with.
  binaries: {
    containerd: W.containerd,
    'containerd-shim-runc-v2': W['containerd-shim-runc-v2'],
    runc: W.runc,
    ctr: W.ctr,
    bridge: W.bridge,
    'host-local': W['host-local'],
    loopback: W.loopback,
    portmap: W.portmap,
  },
  model: containerdModel,
  // No flagTarget: containerd is not Kubernetes; its model cites containerd's source itself.
  gate: containerdGate,
  // Its CRI socket is a unix socket; its streaming server takes a free port on 127.0.0.1.
  listens: [],
  order: 40,
  stage: 'containerd',
  upgradeStep: 'node',
} as const satisfies ComponentSpec<'containerd'>;
