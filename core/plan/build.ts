// Pure: wanted state + read facts -> plan. No I/O here.
import type { ComponentName } from '../components/models/index.ts';
import type { FileChange, HostFacts, HostPlan, Plan, UnitAction, WantedFile } from './types.ts';

export interface HostWant {
  host: string;
  files: WantedFile[];
  components: ComponentName[];
}

export function planHost(want: HostWant, facts: HostFacts): HostPlan {
  const changes: FileChange[] = [];
  for (const f of want.files) {
    const have = facts.hashes.get(f.path) ?? null;
    const mode = facts.modes?.get(f.path);
    if (have === f.sha256 && (mode === undefined || mode === f.mode)) continue;
    changes.push({
      ...f,
      reason: have === null ? 'missing' : have === f.sha256 ? 'mode' : 'changed',
    });
  }
  changes.sort((a, b) =>
    a.kind === b.kind ? a.path.localeCompare(b.path) : a.kind === 'binary' ? -1 : 1,
  );

  const units: UnitAction[] = want.components.map((component) => {
    const u = facts.units.get(component);
    // A mode fix rewrites the same bytes: the running process already holds them.
    const touched = changes
      .filter((c) => c.reason !== 'mode' && c.readBy.includes(component))
      .map((c) => `${c.path} ${c.reason}`);
    if (facts.pendingRestart?.has(component))
      touched.push('restart pending from an interrupted run');
    if (!u || u.loadState !== 'loaded' || u.activeState !== 'active') {
      const state = !u || u.loadState !== 'loaded' ? 'not installed' : `is ${u.activeState}`;
      return { component, action: 'start', reasons: [state, ...touched] };
    }
    if (touched.length > 0) return { component, action: 'restart', reasons: touched };
    if (!u.enabled) return { component, action: 'none', reasons: ['not enabled at boot'] };
    return { component, action: 'none', reasons: [] };
  });
  const daemonReload = changes.some((c) => c.path.startsWith('/etc/systemd/system/'));
  return { host: want.host, changes, units, daemonReload };
}

export function buildPlan(wants: HostWant[], facts: Map<string, HostFacts>): Plan {
  const hosts = wants.map((w) => {
    const f = facts.get(w.host);
    if (!f) throw new Error(`no facts read for host ${w.host}`);
    return planHost(w, f);
  });
  const noop = hosts.every(
    (h) =>
      h.changes.length === 0 && h.units.every((u) => u.action === 'none' && u.reasons.length === 0),
  );
  return { hosts, noop };
}

/** Hosts whose component must (re)start, in inventory order. */
export function hostsFor(
  plan: Plan,
  component: ComponentName,
  action: UnitAction['action'],
): string[] {
  return plan.hosts
    .filter((h) => h.units.some((u) => u.component === component && u.action === action))
    .map((h) => h.host);
}
