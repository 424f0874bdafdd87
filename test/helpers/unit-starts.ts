// Read on a lab host, not from hardwire's report: when systemd started each unit (its own journal
// entries), and which executable each unit's main process runs now.
import type { Session } from '../../core/transport/index.ts';
import { remote } from './lab.ts';

/** systemd's "Started <unit>" (SD_MESSAGE_UNIT_STARTED, systemd/sd-messages.h), logged when a start or restart job completes. */
const UNIT_STARTED = '39f53479d3a045ac8e11786248231fbf';

/** Every time (µs since the epoch, the journal's __REALTIME_TIMESTAMP) systemd finished starting each unit since `sinceMs`. */
export async function unitStarts(
  s: Session,
  units: readonly string[],
  sinceMs: number,
): Promise<Record<string, number[]>> {
  const out = await remote(s, [
    'journalctl',
    '--no-pager',
    '-o',
    'json',
    '--output-fields=UNIT,MESSAGE',
    `--since=@${Math.floor(sinceMs / 1000)}`,
    `MESSAGE_ID=${UNIT_STARTED}`,
  ]);
  const starts: Record<string, number[]> = Object.fromEntries(units.map((u) => [u, []]));
  for (const line of out.split('\n').filter(Boolean)) {
    const e = JSON.parse(line) as { UNIT?: string; __REALTIME_TIMESTAMP: string };
    const unit = e.UNIT?.replace(/\.service$/, '');
    const at = Number(e.__REALTIME_TIMESTAMP);
    if (unit && unit in starts && at >= sinceMs * 1000) starts[unit]!.push(at);
  }
  return starts;
}

/** The unit's main process: its argv (/proc/<pid>/cmdline), the path its exe links to ("… (deleted)" once the file was replaced), and that exe's sha256. */
export async function mainProcess(
  s: Session,
  unit: string,
): Promise<{ argv: string[]; exe: string; sha256: string }> {
  const pid = await remote(s, ['systemctl', 'show', '-p', 'MainPID', '--value', `${unit}.service`]);
  const [argv, exe, sum] = await Promise.all([
    remote(s, ['sh', '-c', `tr '\\0' '\\n' < /proc/${pid}/cmdline`]),
    remote(s, ['readlink', `/proc/${pid}/exe`]),
    remote(s, ['sha256sum', `/proc/${pid}/exe`]),
  ]);
  return { argv: argv.split('\n'), exe, sha256: sum.split(/\s+/)[0] ?? '' };
}
