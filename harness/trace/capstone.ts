// `trace apply --capstone`: the create of a Thermo that passes through the three webhooks `learn
// capstone` puts on the cluster (harness/learn/capstone.ts), each a Pod behind a Service: the
// mutating one labels it, the validating one admits it only when labelled, and the conversion one
// turns the v2 object into v1, the stored version, inside etcd3 store.Create. Each call out is
// named from the live stack as the frame that called client-go's rest.(*Request).Do, and which
// webhook it was is read from that frame's package, not assumed from the order.
import { InputError, StepError } from '../../lib/errors.ts';
import type { RunResult } from '../../lib/proc.ts';
import type { TraceObject } from './object.ts';
import { storageCreateHit, type Hit, type Stage } from './stages.ts';
import { WEBHOOK_SINKS } from './webhook.ts';

export const CAPSTONE_NS = 'api-lab';
export const CAPSTONE_GROUP = 'capstone.learn.hardwire.dev';
export const CAPSTONE_CRD = `thermos.${CAPSTONE_GROUP}`;
export const MUTATING_CONFIGURATION = 'learn-capstone-mutate';
export const VALIDATING_CONFIGURATION = 'learn-capstone-validate';
/** What the mutating webhook sets (core/components/go/webhook/main.go's mutatedLabel). */
export const MUTATED_LABEL = 'webhook.hardwire.dev/mutated';

/** The call out, then the admission answer: no rejection is expected. */
export const CAPSTONE_SINKS = WEBHOOK_SINKS.filter((s) => s.id !== 'webhook-rejection');

export const ROLES = ['mutating', 'validating', 'conversion'] as const;
export type Role = (typeof ROLES)[number];

/** The package of the frame that calls Do, for each webhook. */
const CALLER: Record<Role, string> = {
  mutating: 'k8s.io/apiserver/pkg/admission/plugin/webhook/mutating.',
  validating: 'k8s.io/apiserver/pkg/admission/plugin/webhook/validating.',
  conversion: 'k8s.io/apiextensions-apiserver/pkg/apiserver/conversion.',
};

export interface CapstoneCall {
  role: Role;
  /** The frame that called rest.(*Request).Do: where the apiserver called this webhook. */
  callOut: Stage;
}

export interface CapstoneTrace {
  crd: string;
  configurations: string[];
  calls: CapstoneCall[];
}

type RunKubectl = (args: string[]) => Promise<RunResult>;

/** The object must be a Thermo at v2, not the stored v1, so that storing it needs the conversion webhook. */
export function requireCapstone(obj: TraceObject): void {
  if (obj.kind !== 'Thermo' || obj.apiVersion !== `${CAPSTONE_GROUP}/v2`)
    throw new InputError(
      '-f',
      `with --capstone the object must be a Thermo of apiVersion ${CAPSTONE_GROUP}/v2 (stored as v1, so the conversion webhook runs); ${obj.file} is ${obj.apiVersion ?? 'no apiVersion'} ${obj.kind}`,
    );
  if (obj.namespace !== CAPSTONE_NS)
    throw new InputError(
      '-f',
      `with --capstone the Thermo must be in namespace ${CAPSTONE_NS}, where the capstone's webhooks look; ${obj.file} names ${obj.namespace ?? 'none'}`,
    );
}

/** The capstone's webhooks must be on the cluster before the debug apiserver starts (it lists them then). */
export async function capstoneOnCluster(k: RunKubectl): Promise<void> {
  const wanted = [
    ['crd', CAPSTONE_CRD],
    ['mutatingwebhookconfiguration', MUTATING_CONFIGURATION],
    ['validatingwebhookconfiguration', VALIDATING_CONFIGURATION],
  ];
  for (const [kind, name] of wanted) {
    const r = await k(['get', kind!, name!, '-o', 'name', '--ignore-not-found']);
    if (r.code !== 0)
      throw new StepError('trace apply', `kubectl get ${kind} ${name}: ${r.stderr.trim()}`);
    if (!r.stdout.trim())
      throw new InputError(
        '--capstone',
        `${kind} ${name} is not on the cluster; run "hardwire learn capstone --demo" first, which deploys the three webhooks`,
      );
  }
}

/** The create's hits: on the goroutine whose store.Create wrote the key, and on goroutines it started (the validating dispatcher's). */
export function capstoneRequestHits(hits: Hit[], name: string, namespace: string): Hit[] {
  const create = storageCreateHit(hits, name, namespace);
  if (!create) return [];
  return hits.filter((h) => h.chain.some((c) => c.goroutine === create.goroutine));
}

/** Each webhook's first call out: the stage just above rest.(*Request).Do on that hit's stack. */
export function capstoneCalls(hits: Hit[], stages: Stage[]): CapstoneCall[] {
  const found = new Map<Role, Stage>();
  hits.forEach((h, i) => {
    if (h.sink !== 'webhook-call') return;
    const own = stages.filter((s) => s.hit === i);
    const k = own.findIndex((s) => s.function === h.function);
    const caller = k > 0 ? own[k - 1] : undefined;
    const role = caller && ROLES.find((r) => caller.function.startsWith(CALLER[r]));
    if (role && !found.has(role)) found.set(role, caller);
  });
  const missing = ROLES.filter((r) => !found.has(r));
  if (missing.length)
    throw new StepError(
      'trace apply',
      `the create did not call the ${missing.join(' and ')} webhook${missing.length > 1 ? 's' : ''}: no stop at rest.(*Request).Do under ${missing.map((r) => CALLER[r]).join(' or ')} on its goroutines`,
    );
  return ROLES.map((role) => ({ role, callOut: found.get(role)! }));
}
