// The host changes a proof makes around its trace, each through the Wet gate like every host
// change (a dry run lists them), and each undone afterwards, also when the proof fails.
// A component that elects a leader (kube-scheduler, kube-controller-manager) is proven only while
// the traced instance holds its Lease; on a lab of several control-plane hosts another host's
// instance would keep it, so the other hosts' units stop for the proof. etcd's first boot stops
// the units that use it and moves its data dir aside (harness/prove/first-boot.ts).
import type { Wet } from '../../core/apply/wet.ts';
import { StepError } from '../../lib/errors.ts';
import { shJoin } from '../../lib/quote.ts';

/** One host change: its Wet message and the command that makes it. */
export interface HostStep {
  host: string;
  msg: string;
  argv: string[];
}
/** A change and the change that undoes it (none: another step's undo covers it). */
export interface PlanStep extends HostStep {
  undo?: HostStep;
}

async function runStep(wet: Wet, step: HostStep): Promise<void> {
  await wet.run(step.host, step.msg, async (s) => {
    const r = await s.exec(step.argv, { allowFail: true });
    if (r.code !== 0)
      throw new StepError(
        'flags prove',
        `${step.msg}: ${shJoin(step.argv)}: ${r.stderr.trim() || r.stdout.trim() || `exit ${r.code}`}`,
        { host: step.host },
      );
  });
}

/**
 * Makes the steps in order, runs `fn`, then undoes every step made, last first, whatever `fn` (or
 * a later step) did. An undo that fails does not stop the others. The error thrown says what
 * happened: the first failure, and what was undone or failed to be undone after it.
 */
export async function withSteps<T>(wet: Wet, steps: PlanStep[], fn: () => Promise<T>): Promise<T> {
  const made: PlanStep[] = [];
  let failure: unknown;
  let out: T | undefined;
  try {
    for (const step of steps) {
      await runStep(wet, step);
      made.push(step);
    }
    out = await fn();
  } catch (err) {
    failure = err;
  }
  const undone: string[] = [];
  const failed: string[] = [];
  for (const step of made.reverse()) {
    if (!step.undo) continue;
    try {
      await runStep(wet, step.undo);
      undone.push(`[${step.undo.host}] ${step.undo.msg}`);
    } catch (err) {
      failed.push(err instanceof Error ? err.message : String(err));
    }
  }
  if (failure === undefined && failed.length === 0) return out as T;
  const first =
    failure === undefined
      ? failed.shift()!
      : failure instanceof Error
        ? failure.message
        : String(failure);
  const after = [
    undone.length ? `undone: ${undone.join('; ')}` : '',
    failed.length ? `NOT undone (fix by hand): ${failed.join('; ')}` : '',
  ]
    .filter(Boolean)
    .join('; ');
  if (failure instanceof StepError && !failed.length && !undone.length) throw failure;
  throw new StepError('flags prove', after ? `${first} (${after})` : first, {
    ...(failure instanceof StepError && failure.host ? { host: failure.host } : {}),
    cause: failure,
  });
}

/** Stops `unit` on each of `hosts` for the proof and starts it again afterwards. */
export function othersStopped(hosts: string[], unit: string): PlanStep[] {
  return hosts.map((host) => ({
    host,
    msg: `stop ${unit} for the proof (its Lease must go to the traced instance)`,
    argv: ['systemctl', 'stop', unit],
    undo: { host, msg: `start ${unit} again after the proof`, argv: ['systemctl', 'start', unit] },
  }));
}
