// Reads what is on a host: file hashes and unit states. Read-only, so it needs no Wet.
import { HOST_STATE_DIR } from '../lib/constants.ts';
import type { ReadSession as Session } from '../transport/index.ts';
import type { ComponentName } from '../components/models/index.ts';
import type { HostFacts, UnitFacts } from '../plan/types.ts';

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

export async function readFacts(host: string, s: Session, paths: string[], components: ComponentName[]): Promise<HostFacts> {
  const [hashes, units, pending] = await Promise.all([s.sha256Many(paths), unitFacts(s, components), pendingRestarts(s, components)]);
  return { host, hashes, units, pendingRestart: pending };
}
