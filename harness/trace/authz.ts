// `trace apply --authz-user U`: the same create by a user whom authorization first rejects (no RBAC
// binding) and then admits (a Role allowing get and create of the kind in the object's namespace,
// bound to U). kubectl impersonates U (--as), which the admin may do. The rejection point is read
// from the live stack at the stop in responsewriters.Forbidden: the frame that called it.
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunResult } from '../../lib/proc.ts';
import { StepError } from '../../lib/errors.ts';
import type { Kubectl } from './record.ts';
import type { TraceObject } from './object.ts';
import { atCompiledVersions, deriveStages, type Hit, type Stage } from './stages.ts';
import { FORBIDDEN } from './sinks.ts';

export interface AuthzTrace {
  user: string;
  rejected: Kubectl;
  /** The admin's commands (through the unit's apiserver) that bound the user. */
  bound: string[];
  /** The stop at Forbidden, its stages, and the one that called Forbidden: where authorization said no. */
  hit: Hit;
  stages: Stage[];
  point: Stage;
}

type RunKubectl = (args: string[]) => Promise<RunResult>;

const shown = async (k: RunKubectl, args: string[]): Promise<Kubectl> => {
  const r = await k(args);
  return {
    command: `kubectl ${args.join(' ')}`,
    code: r.code,
    output: `${r.stdout}${r.stderr}`.trim(),
  };
};

const roleName = (user: string) => `hardwire-trace-${user}`.slice(0, 63);

/** Rejected create, binding, admitted apply (retried while the debug apiserver's RBAC cache has not seen the binding). */
export async function rejectThenAdmit(
  k: RunKubectl,
  server: string,
  obj: TraceObject,
  user: string,
): Promise<{ rejected: Kubectl; bound: string[]; admitted: Kubectl }> {
  const as = ['--server', server, '--as', user];
  const rejected = await shown(k, [...as, 'create', '-f', obj.file]);
  if (rejected.code === 0 || !/forbidden/i.test(rejected.output))
    throw new StepError(
      'trace apply',
      `${rejected.command} was not rejected by authorization: ${rejected.output}`,
    );
  const ns = ['-n', obj.namespace!];
  const bind = [
    [
      'create',
      'role',
      roleName(user),
      ...ns,
      '--verb=get,create',
      `--resource=${obj.kind.toLowerCase()}`,
    ],
    ['create', 'rolebinding', roleName(user), ...ns, `--role=${roleName(user)}`, `--user=${user}`],
  ];
  for (const args of bind) {
    const r = await shown(k, args);
    if (r.code !== 0) throw new StepError('trace apply', `${r.command}: ${r.output}`);
  }
  let admitted = await shown(k, [...as, 'apply', '-f', obj.file]);
  for (let i = 0; i < 30 && admitted.code !== 0 && /forbidden/i.test(admitted.output); i++) {
    await sleep(1000);
    admitted = await shown(k, [...as, 'apply', '-f', obj.file]);
  }
  return { rejected, bound: bind.map((a) => `kubectl ${a.join(' ')}`), admitted };
}

/** Removes the Role and RoleBinding rejectThenAdmit made. */
export async function unbind(k: RunKubectl, obj: TraceObject, user: string): Promise<void> {
  await k([
    'delete',
    'rolebinding,role',
    roleName(user),
    '-n',
    obj.namespace!,
    '--ignore-not-found',
  ]);
}

/** The first stop at Forbidden: its stages, and the frame that called Forbidden. */
export function rejection(
  hits: Hit[],
  replaced: Map<string, string>,
): Pick<AuthzTrace, 'hit' | 'stages' | 'point'> | undefined {
  const hit = hits.find((h) => h.sink === 'forbidden');
  if (!hit) return undefined;
  const stages = deriveStages([hit], replaced);
  const i = stages.findIndex((s) => s.function === FORBIDDEN);
  return i > 0
    ? { hit: atCompiledVersions([hit], replaced)[0]!, stages, point: stages[i - 1]! }
    : undefined;
}
