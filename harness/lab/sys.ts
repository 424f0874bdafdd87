// Local process helpers for the lab: signals, polling, the container's init.
import { readFileSync } from 'node:fs';

import { run } from '../../lib/proc.ts';

export async function linkExists(name: string): Promise<boolean> {
  return (
    (await run('ip', ['link', 'show', 'dev', name], { step: 'lab-network', allowFail: true }))
      .code === 0
  );
}

export function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** Direct children of a process, from /proc/<pid>/task/<tid>/children. */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** PID (in our namespace) of a descendant that is PID 1 of its own PID namespace: the container's init. */
export function findContainerInit(pid: number): number | undefined {
  const queue = [...childrenOf(pid)];
  while (queue.length > 0) {
    const p = queue.shift()!;
    try {
      const nspid = /^NSpid:\s+(.*)$/m
        .exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1]
        ?.trim()
        .split(/\s+/);
      if (nspid && nspid.length > 1 && nspid[nspid.length - 1] === '1') return p;
    } catch {
      continue;
    }
    queue.push(...childrenOf(p));
  }
  return undefined;
}
