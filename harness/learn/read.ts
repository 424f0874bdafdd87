// What the checks read, said once: an object or its absence, and the audit events of one learner's
// requests. Each returns findings (why the result is not there), never throws on a missing object.
import type { AuditEvent, Findings, LearnEnv } from './types.ts';

export interface Meta {
  name: string;
  uid: string;
  resourceVersion: string;
  generation?: number;
  deletionTimestamp?: string;
  finalizers?: string[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: { kind: string; name: string; uid: string }[];
  managedFields?: { manager: string; operation: string; fieldsV1?: unknown }[];
}
export interface Obj {
  metadata: Meta;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  data?: Record<string, string>;
}

/** The object at an API path, or undefined when it is not there (404). */
export async function getObj<T = Obj>(env: LearnEnv, path: string): Promise<T | undefined> {
  const r = await env.api<T>('GET', path);
  if (r.status === 404) return undefined;
  if (r.status !== 200)
    throw new Error(`GET ${path} returned ${r.status}: ${JSON.stringify(r.json).slice(0, 200)}`);
  return r.json;
}

export const core = (env: LearnEnv, resource: string, name?: string) =>
  `/api/v1/namespaces/${env.ns}/${resource}${name ? `/${name}` : ''}`;
export const apps = (env: LearnEnv, resource: string, name?: string) =>
  `/apis/apps/v1/namespaces/${env.ns}/${resource}${name ? `/${name}` : ''}`;

export interface Wanted {
  verb: string;
  resource: string;
  name?: string;
  subresource?: string;
  /** The HTTP status the request was answered with. */
  code?: number;
  /** The userAgent's program: kubectl or curl. */
  agent?: 'kubectl' | 'curl';
  /** Query parameters the request had ('*': any value); kubectl sorts them, so they are not matched as text. */
  query?: Record<string, string>;
  /** The whole request URI. */
  uriIs?: string;
}

export const matches = (e: AuditEvent, w: Wanted): boolean =>
  e.verb === w.verb &&
  e.objectRef?.resource === w.resource &&
  (w.name === undefined || e.objectRef?.name === w.name || e.requestURI.includes(`/${w.name}`)) &&
  (e.objectRef?.subresource ?? '') === (w.subresource ?? '') &&
  (w.code === undefined || e.responseStatus?.code === w.code) &&
  (w.agent === undefined || (e.userAgent ?? '').startsWith(`${w.agent}/`)) &&
  Object.entries(w.query ?? {}).every(([k, v]) => {
    const got = new URL(e.requestURI, 'https://x').searchParams.get(k);
    return got !== null && (v === '*' || got === v);
  }) &&
  (w.uriIs === undefined || e.requestURI === w.uriIs);

export const describe = (w: Wanted): string =>
  [
    w.verb,
    `${w.resource}${w.subresource ? `/${w.subresource}` : ''}${w.name ? ` ${w.name}` : ''}`,
    w.agent ? `by ${w.agent}` : '',
    w.query
      ? `with ${Object.entries(w.query)
          .map(([k, v]) => `${k}=${v}`)
          .join('&')}`
      : '',
    w.uriIs ? `at ${w.uriIs}` : '',
    w.code ? `answered ${w.code}` : '',
  ]
    .filter(Boolean)
    .join(' ');

/** Findings for each wanted request the audit log (every control-plane host) does not show in the namespace. */
export async function requested(env: LearnEnv, wanted: readonly Wanted[]): Promise<Findings> {
  const events = await env.audit(`"namespace":"${env.ns}"`);
  return wanted
    .filter((w) => !events.some((e) => matches(e, w)))
    .map((w) => `the audit log shows no ${describe(w)} in ${env.ns}`);
}

/** A finding when the condition does not hold. */
export const expectThat = (ok: boolean, why: string): Findings => (ok ? [] : [why]);

/** An audit event with the fields only some checks read: the impersonated user, the request's body, the annotations. */
export interface AuditDetail extends AuditEvent {
  impersonatedUser?: { username: string };
  requestObject?: Record<string, unknown>;
  annotations?: Record<string, string>;
}

/** A ConfigMap's data in the namespace, or undefined when it is not there: where a learner records what was seen. */
export async function recorded(
  env: LearnEnv,
  name: string,
): Promise<Record<string, string> | undefined> {
  const cm = await getObj(env, core(env, 'configmaps', name));
  return cm ? (cm.data ?? {}) : undefined;
}

/** When the audit log saw the last create of this object that stored it (not a dry run): the object as it is now. */
export async function createdAt(
  env: LearnEnv,
  resource: string,
  name: string,
): Promise<string | undefined> {
  const events = await env.audit(`"name":"${name}"`);
  return events.findLast(
    (e) =>
      e.verb === 'create' &&
      e.objectRef?.resource === resource &&
      e.objectRef.name === name &&
      e.responseStatus?.code === 201 &&
      !new URL(e.requestURI, 'https://x').searchParams.has('dryRun'),
  )?.stageTimestamp;
}
