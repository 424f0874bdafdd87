// The live half of `upgrade plan` (issue 24): the cluster must pass verify's gates (the same code,
// core/apply/phases/verify.ts verifyGates, without its smoke test, which writes), and then the
// objects stored in APIs the target removes are listed. Read-only: connect, read, disconnect.
import type { Inventory } from '../inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import { InputError, StepError } from '../../lib/errors.ts';
import { newContext } from '../apply/context.ts';
import { runPhases } from '../apply/phase.ts';
import { connectPhase } from '../apply/phases/connect.ts';
import { verifyGates } from '../apply/phases/verify.ts';
import { adminCreds } from '../apply/creds.ts';
import { clusterStateDir } from '../pki/store.ts';
import { storedInRemoved, type RemovedKind, type StoredApiRow } from './stored-apis.ts';

export type Live =
  | { checked: false; skipped: string }
  | { checked: true; server: string; gatesPassed: number; apis: StoredApiRow[] };

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

/** exit 2 with one line: the first failing gate (its name carries the host where it has one), and how many more. */
function refuse(failed: { name: string; detail: string }[]): InputError {
  const [first, ...rest] = failed;
  const more = rest.length ? ` (${rest.length} more failed: ${rest.map((r) => r.name).join('; ')})` : '';
  return new InputError('verify', `${first!.name}: ${oneLine(first!.detail).slice(0, 300)}${more}; the plan reads a cluster that passes verify (or plan from the maps alone with --offline)`);
}

export async function liveChecks(inv: Inventory, stateDir: string, removed: readonly RemovedKind[], o: { gateTimeoutMs: number; log: Logger }): Promise<Live> {
  const ctx = newContext(inv, stateDir, clusterStateDir(stateDir, inv), { dryRun: true, acceptNewHostKeys: false, gateTimeoutMs: o.gateTimeoutMs }, o.log);
  let live: Live | undefined;
  try {
    await runPhases([connectPhase, {
      id: 'upgrade-live',
      title: "verify's gates, then the objects in APIs the target removes",
      async run() {
        const gates = await verifyGates(ctx);
        for (const r of gates) o.log.info(`  ${r.ok ? 'ok  ' : 'FAIL'} ${r.name}: ${r.detail}`);
        const failed = gates.filter((r) => !r.ok);
        if (gates.length === 0) throw new InputError('verify', 'no gate ran');
        if (failed.length) throw refuse(failed);
        const creds = adminCreds(ctx.clusterDir);
        live = { checked: true, server: creds.server, gatesPassed: gates.length, apis: await storedInRemoved(creds, removed, inv.cluster.kubernetesVersion) };
      },
    }], ctx);
  } catch (err) {
    // A host SSH cannot reach is a failed gate too: its name and the step that failed.
    if (err instanceof StepError) throw new InputError('verify', `${err.host ? `${err.host}: ` : ''}${err.step}: ${oneLine(err.message).slice(0, 300)}; the plan reads a cluster that passes verify (or plan from the maps alone with --offline)`);
    throw err;
  }
  return live!;
}
