// The steps of `upgrade apply`, pure: what each host runs now (read live: etcd's own member
// versions, the sha256 of each running process's executable) and the target's files in, the
// ordered list of one-host steps out. It is the dry run's content, and a re-run or a resumed run
// gets only the steps still left: a step is there only when its host runs something older or holds
// a file that differs from the target's.
import { UPGRADE_GROUPS as STEP_GROUPS, type ComponentName } from '../components/registry/index.ts';
import type { FileChange, WantedFile } from '../plan/types.ts';
import { InputError } from '../../lib/errors.ts';
import { unitOf } from '../../lib/unit.ts';

/** The groups an upgrade restarts, in the version-skew order: the registry's upgrade steps. */
export const UPGRADE_GROUPS: readonly (readonly ComponentName[])[] = STEP_GROUPS.map(
  (g) => g.components,
);

/** Components whose binary is not the Kubernetes release's: an upgrade restarts them only for a changed file. */
const NOT_KUBERNETES: readonly ComponentName[] = ['containerd', 'registry'];

/** What a host runs now, per component: etcd's member version ("v3.6.8"), or whether the process is the target's binary. */
export type Running = Partial<Record<ComponentName, string | 'target' | 'other' | 'stopped'>>;

export interface HostInput {
  host: string;
  /** The components the inventory runs here. */
  components: ComponentName[];
  /** The target's files that differ on this host (wire's plan at the target version). */
  changes: FileChange[];
  running: Running;
}

export interface StepInput {
  hosts: HostInput[];
  /** The etcd versions to pass through, in order, the last the target's (core/upgrade/etcd.ts hops). */
  etcdPath: string[];
  /** The etcd binaries of a hop before the last (the last's are among the changes). */
  hopFiles: (version: string) => WantedFile[];
  /** The component a file belongs to when no component reads it (etcdctl: etcd's). */
  ownerOf: (path: string) => ComponentName | undefined;
}

export interface UpgradeStep {
  host: string;
  /** Restarted in this order, each then gated. */
  restart: ComponentName[];
  /** What is written first (backed up on the host, so a failed gate restores them). */
  files: (FileChange | (WantedFile & { reason: 'hop' }))[];
  /** "etcd v3.6.16" for a hop, else the Kubernetes target. */
  version: string;
  why: string;
}

function cmp(a: string, b: string): number {
  const p = (v: string) => v.replace(/^v/, '').split('.').map(Number);
  const [x, y] = [p(a), p(b)];
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

/** Each change goes with the first group that reads it, so it is written just before its reader restarts. */
function assign(h: HostInput, ownerOf: StepInput['ownerOf']): Map<ComponentName, FileChange[]> {
  const out = new Map<ComponentName, FileChange[]>();
  const order = UPGRADE_GROUPS.flat();
  for (const c of h.changes) {
    const readers =
      c.readBy.length > 0
        ? c.readBy
        : [ownerOf(c.path)].filter((x): x is ComponentName => x !== undefined);
    const first = order.find((o) => readers.includes(o) && h.components.includes(o));
    if (!first)
      throw new Error(
        `${h.host}: ${c.path} is read by ${readers.join(', ') || 'no component'}, which an upgrade does not restart`,
      );
    out.set(first, [...(out.get(first) ?? []), c]);
  }
  return out;
}

export function upgradeSteps(input: StepInput, target: string): UpgradeStep[] {
  const steps: UpgradeStep[] = [];
  const owned = new Map(input.hosts.map((h) => [h.host, assign(h, input.ownerOf)]));
  const last = input.etcdPath.at(-1);
  // The path only goes up: a member already past its last version (a re-run with a lower --etcd-to) is refused, not downgraded.
  for (const h of input.hosts) {
    const now = h.running.etcd;
    if (last && now && /^v\d/.test(now) && cmp(now, last) > 0)
      throw new InputError(
        '--etcd-to',
        `etcd member ${h.host} runs ${now}, newer than ${last}: an upgrade does not downgrade etcd; name ${now} or newer`,
      );
  }
  // etcd: every member through one hop before any member takes the next (one minor at a time).
  for (const v of input.etcdPath) {
    for (const h of input.hosts.filter((x) => x.components.includes('etcd'))) {
      const now = h.running.etcd;
      // Anything but a version etcd reported (stopped, unreadable) counts as behind: the step makes it so.
      const behind = now === undefined || !/^v\d/.test(now) || cmp(now, v) < 0;
      const files =
        v === last
          ? (owned.get(h.host)!.get('etcd') ?? [])
          : input.hopFiles(v).map((f) => ({ ...f, reason: 'hop' as const }));
      if (!behind && (v !== last || files.length === 0)) continue;
      steps.push({
        host: h.host,
        restart: ['etcd'],
        files,
        version: `etcd ${v}`,
        why: behind ? `runs etcd ${now ?? 'unknown'}` : "its etcd files differ from the target's",
      });
    }
  }
  for (const group of UPGRADE_GROUPS.slice(1)) {
    for (const h of input.hosts) {
      const here = group.filter((c) => h.components.includes(c));
      const files = here.flatMap((c) => owned.get(h.host)!.get(c) ?? []);
      // containerd and the lab registry are not Kubernetes binaries: each restarts only for a file of its own.
      const restart = here.filter(
        (c) =>
          (owned.get(h.host)!.get(c) ?? []).length > 0 ||
          (!NOT_KUBERNETES.includes(c) && h.running[c] !== 'target'),
      );
      if (restart.length === 0) continue;
      const old = restart.filter((c) => !NOT_KUBERNETES.includes(c) && h.running[c] !== 'target');
      steps.push({
        host: h.host,
        restart,
        files,
        version: target,
        why:
          old.length > 0
            ? `${old.join(', ')} not running ${target}`
            : "files differ from the target's",
      });
    }
  }
  return steps;
}

/** The dry run's lines: each step with every write and restart it makes. */
export function formatSteps(steps: UpgradeStep[]): string {
  if (steps.length === 0) return 'nothing to upgrade: every host runs the target\n';
  return steps
    .map((s, i) =>
      [
        `${i + 1}. [${s.host}] ${s.restart.join(' + ')} → ${s.version} (${s.why})`,
        ...s.files.map((f) => `     write ${f.path} (${f.reason})`),
        ...s.restart.map((c) => `     systemctl restart ${unitOf(c)}, then its gate`),
      ].join('\n'),
    )
    .join('\n')
    .concat('\n');
}
