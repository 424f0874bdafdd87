// `hardwire learn`: the exercises by curriculum id, and what --demo and --check do with one.
// --demo runs the reset lines quietly, then the commands as typed, then the check; --check only reads.
import { InputError } from '../../lib/errors.ts';
import { citeAt } from './cites.ts';
import { TASKS } from './tasks.ts';
import { EDGE } from './edge.ts';
import { MODULE_3_1 } from './module-3-1.ts';
import { MODULE_3_2 } from './module-3-2.ts';
import { MODULE_3_3 } from './module-3-3.ts';
import { MODULE_3_4 } from './module-3-4.ts';
import { MODULE_3_5 } from './module-3-5.ts';
import { CAPSTONE } from './capstone.ts';
import type { Exercise, Findings, LearnEnv, Typed } from './types.ts';

export const EXERCISES: readonly Exercise[] = [
  ...TASKS,
  ...EDGE,
  ...MODULE_3_1,
  ...MODULE_3_2,
  ...MODULE_3_3,
  ...MODULE_3_4,
  ...MODULE_3_5,
  ...CAPSTONE,
];

export function exercise(id: string): Exercise {
  const e = EXERCISES.find((x) => x.id === id);
  if (!e)
    throw new InputError(
      'ID',
      `no exercise "${id}"; "hardwire learn" lists them (e.g. ${EXERCISES[0]!.id})`,
    );
  return e;
}

export interface CheckResult {
  id: string;
  done: boolean;
  findings: Findings;
}

export interface DemoResult extends CheckResult {
  typed: Typed[];
}

/** The running version's citations, with where each was looked for. */
export function citations(e: Exercise, running: string) {
  return e.cites.map((c) => ({
    ...citeAt(c, running),
    holds: c.holds,
    why: c.why,
    ...(c.live ? { live: true } : {}),
  }));
}

export async function check(env: LearnEnv, e: Exercise): Promise<CheckResult> {
  const findings = await e.check(env);
  return { id: e.id, done: findings.length === 0, findings };
}

export async function demo(env: LearnEnv, e: Exercise): Promise<DemoResult> {
  if (e.reset) await env.sh(e.reset);
  const typed = await env.sh(e.commands);
  return { ...(await check(env, e)), typed };
}
