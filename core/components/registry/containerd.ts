import { containerdModel } from '../models/containerd.ts';
import { notStartedGate } from './gates.ts';
import type { ComponentSpec } from './types.ts';

const NOT_STARTED = 'wire renders and pushes the workers\' units; their start phase and gates come with the rest of issue 22';

export const containerd = {
  name: 'containerd',
  role: 'worker',
  // containerd, its shim, ctr, runc and the CNI plugins are built on branch workers
  // (components/registry/worker-binaries.ts) and move here when it is integrated.
  binaries: {},
  model: containerdModel,
  // No flagTarget: containerd is not Kubernetes; its model cites containerd's source itself.
  gate: notStartedGate(NOT_STARTED),
  order: 40,
  stage: 'containerd',
  notStarted: NOT_STARTED,
} as const satisfies ComponentSpec<'containerd'>;
