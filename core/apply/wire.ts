// `hardwire wire`: the ordered phase list, and the run that drives it.
import type { Phase } from './phase.ts';
import { runPhases } from './phase.ts';
import { newContext, type WireContext, type WireOptions } from './context.ts';
import type { Inventory } from '../inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import { clusterStateDir } from '../pki/store.ts';
import { pkiPhase } from './phases/pki.ts';
import { renderPhase } from './phases/render.ts';
import { binariesPhase } from './phases/binaries.ts';
import { connectPhase } from './phases/connect.ts';
import { readPhase } from './phases/read.ts';
import { preflightPhase } from './phases/preflight.ts';
import { planPhase } from './phases/plan.ts';
import { pushPhase } from './phases/push.ts';
import { accountsPhase } from './phases/accounts.ts';
import { rbacPhase } from './phases/rbac.ts';
import { startPhasesSplitAfter, startPhasesSplitBefore } from './phases/start.ts';
import { statusPhase } from './phases/status.ts';
import { snapshotPhase } from './phases/snapshot.ts';
import { noopGatesPhase, unlessNoop } from './phases/gates.ts';
import { addonsPhase, probesPhase } from './phases/addons.ts';
import { nodesPhase } from './phases/nodes.ts';

/** Local PKI, then each host read (preflight), rendered and read again, then the plan: everything before the first host change. */
export const PLAN_PHASES: readonly Phase[] = [
  pkiPhase,
  connectPhase,
  preflightPhase,
  renderPhase,
  binariesPhase,
  readPhase,
  planPhase,
];

// The admin.conf binding must exist before the Lease gates, which read Leases as admin; the
// workers' Nodes before their kubelets register.
const [throughApiserver, afterApiserver] = startPhasesSplitAfter('kube-apiserver');
const [beforeKubelet] = startPhasesSplitBefore('kubelet');
const [throughContainerd, workers] = [
  afterApiserver.filter((p) => beforeKubelet.includes(p)),
  afterApiserver.filter((p) => !beforeKubelet.includes(p)),
];

export const WIRE_PHASES: readonly Phase[] = [
  ...PLAN_PHASES,
  snapshotPhase,
  accountsPhase,
  pushPhase,
  ...throughApiserver.map(unlessNoop),
  rbacPhase,
  ...throughContainerd.map(unlessNoop),
  nodesPhase,
  ...workers.map(unlessNoop),
  noopGatesPhase,
  addonsPhase,
  probesPhase,
  statusPhase,
];

export async function wire(
  inv: Inventory,
  stateDir: string,
  opts: WireOptions,
  log: Logger,
): Promise<WireContext> {
  const ctx = newContext(inv, stateDir, clusterStateDir(stateDir, inv), opts, log);
  await runPhases(WIRE_PHASES, ctx);
  return ctx;
}
