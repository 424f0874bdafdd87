// A process named by its PID and its start time, so that a PID the kernel has handed to another
// process since is not mistaken for the one recorded.
import { readFileSync } from 'node:fs';

/** Start time of a process in clock ticks since boot (field 22 of /proc/<pid>/stat), or undefined if gone. */
export function procStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm (field 2) may contain spaces and parens: split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined; // exited, not yet reaped
    return fields[19];
  } catch {
    return undefined;
  }
}

/** True only for the very process we recorded: same PID and same start time. */
export function isSameProcess(
  pid: number | null | undefined,
  startTime: string | null | undefined,
): boolean {
  return (
    typeof pid === 'number' &&
    pid > 0 &&
    typeof startTime === 'string' &&
    procStartTime(pid) === startTime
  );
}
