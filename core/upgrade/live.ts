// The live half of `upgrade plan` and the first read of `upgrade apply` (issue 24): the cluster
// must pass verify's gates (the same code, core/apply/phases/verify.ts verifyGates, without its
// smoke test, which writes), and then the objects stored in APIs the target removes are listed.
// Read-only: connect, read, disconnect. Both commands call liveFor; apply also refuses a stored object.
import type { Inventory } from '../inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import { InputError, StepError } from '../../lib/errors.ts';
import { newContext } from '../apply/context.ts';
import { runPhases } from '../apply/phase.ts';
import { connectPhase } from '../apply/phases/connect.ts';
import { verifyGates } from '../apply/phases/verify.ts';
import { adminCreds } from '../apply/creds.ts';
import { clusterStateDir } from '../pki/store.ts';
import {
  DISABLED_AT_SOURCE,
  credsGet,
  removedBetween,
  storedInRemoved,
  type ApiLifecycle,
  type RemovedKind,
  type StoredApiRow,
} from './stored-apis.ts';

export type Live =
  | { checked: false; skipped: string }
  | {
      checked: true;
      server: string;
      /** upgrade plan: verify's gates passed first. audit: none ran; `via` says whose kubeconfig listed them. */
      gatesPassed?: number;
      via?: string;
      apis: StoredApiRow[];
    };

/** Who reads the cluster: the refusal says what that command needs. */
export type LiveFor = 'plan' | 'apply';

const NEEDS: Record<LiveFor, string> = {
  plan: 'the plan reads a cluster that passes verify (or plan from the maps alone with --offline)',
  apply:
    'nothing was changed on any host; upgrade apply starts only on a cluster that passes verify',
};

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

/** How the live checks connect: each gate's timeout, and --accept-new-host-keys. */
interface LiveOptions {
  gateTimeoutMs: number;
  acceptNewHostKeys?: boolean;
  log: Logger;
  who: LiveFor;
}

/** exit 2 with one line: the first failing gate (its name carries the host where it has one), and how many more. */
function refuse(failed: { name: string; detail: string }[], who: LiveFor): InputError {
  const [first, ...rest] = failed;
  const more = rest.length
    ? ` (${rest.length} more failed: ${rest.map((r) => r.name).join('; ')})`
    : '';
  return new InputError(
    'verify',
    `${first!.name}: ${oneLine(first!.detail).slice(0, 300)}${more}; ${NEEDS[who]}`,
  );
}

export async function liveChecks(
  inv: Inventory,
  stateDir: string,
  removed: readonly RemovedKind[],
  o: LiveOptions,
): Promise<Live> {
  const ctx = newContext(
    inv,
    stateDir,
    clusterStateDir(stateDir, inv),
    {
      dryRun: true,
      acceptNewHostKeys: o.acceptNewHostKeys === true,
      gateTimeoutMs: o.gateTimeoutMs,
    },
    o.log,
  );
  let live: Live | undefined;
  try {
    await runPhases(
      [
        connectPhase,
        {
          id: 'upgrade-live',
          title: "verify's gates, then the objects in APIs the target removes",
          async run() {
            const gates = await verifyGates(ctx);
            for (const r of gates) o.log.info(`  ${r.ok ? 'ok  ' : 'FAIL'} ${r.name}: ${r.detail}`);
            const failed = gates.filter((r) => !r.ok);
            if (gates.length === 0) throw new InputError('verify', 'no gate ran');
            if (failed.length) throw refuse(failed, o.who);
            const creds = adminCreds(ctx.clusterDir);
            live = {
              checked: true,
              server: creds.server,
              gatesPassed: gates.length,
              apis: await storedInRemoved(credsGet(creds), removed, inv.cluster.kubernetesVersion),
            };
          },
        },
      ],
      ctx,
    );
  } catch (err) {
    // A host SSH cannot reach is a failed gate too: its name and the step that failed.
    if (err instanceof StepError)
      throw new InputError(
        'verify',
        `${err.host ? `${err.host}: ` : ''}${err.step}: ${oneLine(err.message).slice(0, 300)}; ${NEEDS[o.who]}`,
      );
    throw err;
  }
  return live!;
}

/**
 * The live checks from `from` to `to`: the kinds `to` stops serving come from its committed
 * api-lifecycle.json (`lifecycle`, loadApiLifecycle in harness/flags, which core does not import;
 * a missing one is refused on --to, exit 2), then liveChecks.
 */
export function liveFor(
  inv: Inventory,
  stateDir: string,
  lifecycle: ApiLifecycle | null,
  from: string,
  to: string,
  o: LiveOptions,
): Promise<Live> {
  const offline = o.who === 'plan' ? ', or plan with --offline' : '';
  if (!lifecycle)
    throw new InputError(
      '--to',
      `no core/flags/data/${to}/api-lifecycle.json to say which APIs ${to} removes ("hardwire flags --kubernetes-version ${to} --regenerate")${offline}`,
    );
  return liveChecks(inv, stateDir, removedBetween(lifecycle.kinds, from, to), o);
}

/** apply's refusal (exit 2, one line) when a kind the target stops serving still has objects reached through it. */
export function refuseStored(live: Live, from: string, to: string): void {
  if (!live.checked) return;
  const [first, ...rest] = live.apis.filter((r) => r.objects.length > 0);
  if (!first) return;
  const gv = `${first.group}/${first.version}`;
  const more = rest.length
    ? ` (also ${rest.map((r) => `${r.group}/${r.version} ${r.kind}`).join(', ')})`
    : '';
  const off = DISABLED_AT_SOURCE[from]?.[gv];
  const fix = off
    ? `${gv} is off by default at ${from} (${off}): drop it from cluster.extraArgs.kube-apiserver.runtime-config once no client uses it, wire, then apply`
    : 'move their clients and manifests to a served version, then apply';
  throw new InputError(
    `removed API ${gv} ${first.kind}`,
    `${first.objects.length} object(s) reached through it (${oneLine(first.objects.join(', ')).slice(0, 200)})${more}, and ${to} stops serving it (${first.removedAt}); ${fix}; nothing was changed on any host`,
  );
}
