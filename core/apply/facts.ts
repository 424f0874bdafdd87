// Reads what is on a host: file hashes and unit states. Read-only, so it needs no Wet.
import { HOST_STATE_DIR } from '../../lib/constants.ts';
import type { ReadSession as Session } from '../transport/index.ts';
import type { ComponentName } from '../components/models/index.ts';
import type { Account } from '../components/models/types.ts';
import type { AccountFacts, HostFacts, UnitFacts } from '../plan/types.ts';
import { readRecord, sameStat, statMany } from './manifest.ts';
import { parseShow, showArgv } from '../transport/systemctl.ts';
import { unitOf } from '../../lib/unit.ts';

export async function unitFacts(
  s: Session,
  components: ComponentName[],
): Promise<Map<ComponentName, UnitFacts>> {
  const out = new Map<ComponentName, UnitFacts>();
  if (components.length === 0) return out;
  const r = await s.exec(
    showArgv(
      components.map((c) => unitOf(c)),
      ['Id', 'LoadState', 'ActiveState', 'ActiveEnterTimestampMonotonic', 'UnitFileState'],
    ),
    { timeoutMs: 15_000 },
  );
  const units = parseShow(r.stdout);
  components.forEach((c, i) => {
    const kv = units[i] ?? {};
    out.set(c, {
      loadState: kv.LoadState ?? 'not-found',
      activeState: kv.ActiveState ?? 'inactive',
      activeEnterMonotonic: kv.ActiveEnterTimestampMonotonic ?? '0',
      enabled: kv.UnitFileState === 'enabled',
    });
  });
  return out;
}

/** Restart markers left by a run that pushed files but did not get to restart (see roll.ts). */
export const PENDING_DIR = `${HOST_STATE_DIR}/pending-restart`;

async function pendingRestarts(
  s: Session,
  components: ComponentName[],
): Promise<Set<ComponentName>> {
  const r = await s.exec(['ls', '-1', PENDING_DIR], { allowFail: true });
  const names = new Set(r.stdout.split('\n').map((l) => l.trim()));
  return new Set(components.filter((c) => names.has(c)));
}

/** Whether each account's user exists, and the owner and mode of each directory it owns (read-only commands, at once). */
export async function readAccounts(
  s: Session,
  accounts: Account[],
): Promise<Map<string, AccountFacts>> {
  const out = new Map<string, AccountFacts>();
  if (accounts.length === 0) return out;
  const dirs = accounts.flatMap((a) => a.owns.map((d) => d.path));
  // Both exit non-zero when something is missing, and still print what they found.
  const [users, stats] = await Promise.all([
    s.exec(['grep', '-o', '-E', `^(${accounts.map((a) => a.user).join('|')}):`, '/etc/passwd'], {
      allowFail: true,
    }),
    dirs.length > 0
      ? s.exec(['stat', '-c', '%n\t%U:%G %a', '--', ...dirs], { allowFail: true })
      : Promise.resolve({ stdout: '' }),
  ]);
  const found = new Set(users.stdout.split('\n').map((l) => l.replace(/:$/, '')));
  const have = new Map(
    stats.stdout
      .split('\n')
      .filter((l) => l.includes('\t'))
      .map((l) => [l.slice(0, l.indexOf('\t')), l.slice(l.indexOf('\t') + 1)] as const),
  );
  for (const a of accounts)
    out.set(a.user, {
      exists: found.has(a.user),
      owns: new Map(a.owns.map((d) => [d.path, have.get(d.path)])),
    });
  return out;
}

/**
 * What a host holds: each wanted file's sha256 and mode, unit states and restart markers. A file's
 * recorded sha256 is trusted when its stat equals the record's; the others are hashed, all of them
 * with `verifyHashes`.
 */
export async function readFacts(
  host: string,
  s: Session,
  paths: string[],
  components: ComponentName[],
  opts: { verifyHashes?: boolean; accounts?: Account[] } = {},
): Promise<HostFacts> {
  const [record, stats, units, pending, accounts] = await Promise.all([
    readRecord(s),
    statMany(s, paths),
    unitFacts(s, components),
    pendingRestarts(s, components),
    readAccounts(s, opts.accounts ?? []),
  ]);
  const hashes = new Map<string, string | null>();
  const modes = new Map<string, number>();
  const toHash: string[] = [];
  const stale: string[] = [];
  for (const p of paths) {
    const st = stats.get(p);
    if (!st) {
      hashes.set(p, null);
      continue;
    }
    modes.set(p, st.mode);
    const rec = record.get(p);
    const known = rec !== undefined && rec.sha256 !== '' && sameStat(rec, st);
    if (!known) stale.push(p);
    if (known && !opts.verifyHashes) hashes.set(p, rec.sha256);
    else toHash.push(p);
  }
  for (const [p, h] of await s.sha256Many(toHash)) hashes.set(p, h);
  return {
    host,
    hashes,
    modes,
    units,
    pendingRestart: pending,
    record,
    stale,
    hashed: toHash.length,
    accounts,
  };
}
