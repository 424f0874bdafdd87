// Reads what is on a host: file hashes and unit states. Read-only, so it needs no Wet.
import { HOST_STATE_DIR } from '../lib/constants.ts';
import type { ReadSession as Session } from '../transport/index.ts';
import type { ComponentName } from '../components/models/index.ts';
import type { HostFacts, UnitFacts } from '../plan/types.ts';
import { readRecord, sameStat, statMany } from './manifest.ts';

export async function unitFacts(s: Session, components: ComponentName[]): Promise<Map<ComponentName, UnitFacts>> {
  const out = new Map<ComponentName, UnitFacts>();
  if (components.length === 0) return out;
  const r = await s.exec(['systemctl', 'show', '--property=Id,LoadState,ActiveState,ActiveEnterTimestampMonotonic,UnitFileState', ...components.map((c) => `${c}.service`)], { timeoutMs: 15_000 });
  // One block per unit, separated by blank lines, in the order asked.
  const blocks = r.stdout.trim().split(/\n\s*\n/);
  components.forEach((c, i) => {
    const kv = new Map((blocks[i] ?? '').split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const));
    out.set(c, {
      loadState: kv.get('LoadState') ?? 'not-found',
      activeState: kv.get('ActiveState') ?? 'inactive',
      activeEnterMonotonic: kv.get('ActiveEnterTimestampMonotonic') ?? '0',
      enabled: kv.get('UnitFileState') === 'enabled',
    });
  });
  return out;
}

/** Restart markers left by a run that pushed files but did not get to restart (see roll.ts). */
export const PENDING_DIR = `${HOST_STATE_DIR}/pending-restart`;

async function pendingRestarts(s: Session, components: ComponentName[]): Promise<Set<ComponentName>> {
  const r = await s.exec(['ls', '-1', PENDING_DIR], { allowFail: true });
  const names = new Set(r.stdout.split('\n').map((l) => l.trim()));
  return new Set(components.filter((c) => names.has(c)));
}

/**
 * What a host holds: each wanted file's sha256 and mode, unit states and restart markers. A file's
 * recorded sha256 is trusted when its stat equals the record's; the others are hashed, all of them
 * with `verifyHashes`.
 */
export async function readFacts(host: string, s: Session, paths: string[], components: ComponentName[], opts: { verifyHashes?: boolean } = {}): Promise<HostFacts> {
  const [record, stats, units, pending] = await Promise.all([readRecord(s), statMany(s, paths), unitFacts(s, components), pendingRestarts(s, components)]);
  const hashes = new Map<string, string | null>();
  const modes = new Map<string, number>();
  const toHash: string[] = [];
  const stale: string[] = [];
  for (const p of paths) {
    const st = stats.get(p);
    if (!st) { hashes.set(p, null); continue; }
    modes.set(p, st.mode);
    const rec = record.get(p);
    const known = rec !== undefined && rec.sha256 !== '' && sameStat(rec, st);
    if (!known) stale.push(p);
    if (known && !opts.verifyHashes) hashes.set(p, rec.sha256);
    else toHash.push(p);
  }
  for (const [p, h] of await s.sha256Many(toHash)) hashes.set(p, h);
  return { host, hashes, modes, units, pendingRestart: pending, record, stale, hashed: toHash.length };
}
