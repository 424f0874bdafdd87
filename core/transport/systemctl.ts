// `systemctl show`, asked and parsed one way: its output is `Key=value` lines, one block per unit
// (a blank line between blocks), in the order the units were named.
import type { ExecOptions, ExecResult } from './session.ts';

/** A unit's properties as systemctl prints them; a property systemd does not know is absent. */
export type UnitProps = Partial<Record<string, string>>;

/** What can run systemctl: a session, read-only or not. */
interface Exec {
  exec(argv: string[], opts?: ExecOptions): Promise<ExecResult>;
}

/** The argv that shows `props` of `units` ('show' first, as transport/read-only.ts allows). */
export function showArgv(units: readonly string[], props: readonly string[]): string[] {
  return ['systemctl', 'show', `--property=${props.join(',')}`, ...units];
}

/** One record per block of `systemctl show` output, in order. The value is everything after the first '='. */
export function parseShow(stdout: string): UnitProps[] {
  return stdout
    .trim()
    .split(/\n\s*\n/)
    .map((block) =>
      Object.fromEntries(
        block
          .split('\n')
          .filter((l) => l.includes('='))
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      ),
    );
}

/** `props` of one unit. */
export async function showUnit(
  s: Exec,
  unit: string,
  props: readonly string[],
  opts?: ExecOptions,
): Promise<UnitProps> {
  return parseShow((await s.exec(showArgv([unit], props), opts)).stdout)[0] ?? {};
}
