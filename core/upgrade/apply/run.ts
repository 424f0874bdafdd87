// `hardwire upgrade apply`: wire's phases up to the read of the hosts, at the target version, then
// the upgrade's own: what runs now, the steps, a snapshot, the roll, the host records.
import type { Phase } from '../../apply/phase.ts';
import { runPhases } from '../../apply/phase.ts';
import { newContext, type WireContext, type WireOptions } from '../../apply/context.ts';
import type { Inventory } from '../../inventory/load.ts';
import type { Logger } from '../../../lib/log.ts';
import { clusterStateDir } from '../../pki/store.ts';
import { pkiPhase } from '../../apply/phases/pki.ts';
import { renderPhase } from '../../apply/phases/render.ts';
import { binariesPhase } from '../../apply/phases/binaries.ts';
import { connectPhase } from '../../apply/phases/connect.ts';
import { preflightPhase } from '../../apply/phases/preflight.ts';
import { readPhase } from '../../apply/phases/read.ts';
import type { UpgradeRun } from './state.ts';
import { hopBinariesPhase } from './phases/hop-binaries.ts';
import { oneArchPhase } from './phases/arch.ts';
import { runningPhase } from './phases/running.ts';
import { stepsPhase } from './phases/steps.ts';
import { upgradeSnapshotPhase } from './phases/snapshot.ts';
import { rollPhase } from './phases/roll.ts';
import { recordPhase } from './phases/record.ts';

function upgradePhases(run: UpgradeRun): Phase[] {
  return [
    pkiPhase,
    connectPhase,
    preflightPhase,
    oneArchPhase,
    renderPhase,
    binariesPhase,
    hopBinariesPhase(run),
    readPhase,
    runningPhase(run),
    stepsPhase(run),
    upgradeSnapshotPhase(run),
    rollPhase(run),
    recordPhase(run),
  ];
}

/** `inv` names the target in cluster.kubernetesVersion (the caller sets it to --to). */
export async function upgradeApply(
  inv: Inventory,
  stateDir: string,
  opts: WireOptions,
  etcdPath: string[],
  log: Logger,
): Promise<{ ctx: WireContext; run: UpgradeRun }> {
  const ctx = newContext(inv, stateDir, clusterStateDir(stateDir, inv), opts, log);
  const run: UpgradeRun = {
    to: inv.cluster.kubernetesVersion,
    etcdPath,
    hops: new Map(),
    running: new Map(),
    steps: [],
    done: [],
  };
  await runPhases(upgradePhases(run), ctx);
  return { ctx, run };
}
