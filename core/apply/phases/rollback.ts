import type { Phase } from '../phase.ts';
import { RUN_ID, session, type WireContext } from '../context.ts';
import { BACKUP_RECORD, BACKUP_ROOT, parseBackupRecord } from '../backup.ts';
import { componentsOn, type ComponentName } from '../../components/registry/index.ts';
import type { HostPlan } from '../../plan/types.ts';
import { InputError } from '../../../lib/errors.ts';
import { unitOf } from '../../../lib/unit.ts';

// Copy back next to the target, then rename over it: the same atomicity as a push.
const RESTORE_SCRIPT =
  'set -e; for p in "$@"; do cp -p -- "$BK$p" "$p.hardwire-rollback"; mv -f -- "$p.hardwire-rollback" "$p"; done';

/** Puts back what the backup in `dir` holds; the plan it returns restarts every component those files feed. */
export async function restoreHost(ctx: WireContext, dir: string, name: string): Promise<HostPlan> {
  const host = ctx.inv.hosts.find((h) => h.name === name)!;
  const s = session(ctx, name);
  const none: HostPlan = {
    host: name,
    changes: [],
    units: componentsOn(host).map((component) => ({ component, action: 'none', reasons: [] })),
    daemonReload: false,
  };
  const r = await s.exec(['cat', `${dir}/${BACKUP_RECORD}`], { allowFail: true });
  if (r.code !== 0) return none; // this run changed nothing here
  const rec = parseBackupRecord(r.stdout);
  const affected = new Set<ComponentName>(
    [...rec.overwritten, ...rec.created].flatMap((f) => f.readBy),
  );
  const createdUnits = rec.created
    .filter((f) => f.path.startsWith('/etc/systemd/system/'))
    .map((f) => f.path.slice('/etc/systemd/system/'.length));
  if (createdUnits.length > 0) {
    await ctx.wet.run(name, `stop units this run created: ${createdUnits.join(' ')}`, (w) =>
      w.exec(['systemctl', 'disable', '--now', '--quiet', ...createdUnits], { timeoutMs: 120_000 }),
    );
  }
  if (rec.overwritten.length > 0) {
    await ctx.wet.run(name, `restore ${rec.overwritten.length} file(s) from ${dir}`, (w) =>
      w.exec([
        'env',
        `BK=${dir}`,
        'sh',
        '-c',
        RESTORE_SCRIPT,
        'sh',
        ...rec.overwritten.map((f) => f.path),
      ]),
    );
  }
  if (rec.created.length > 0) {
    await ctx.wet.run(name, `remove ${rec.created.length} file(s) this run created`, (w) =>
      w.exec(['rm', '-f', '--', ...rec.created.map((f) => f.path)]),
    );
  }
  await ctx.wet.run(name, 'systemctl daemon-reload', (w) => w.exec(['systemctl', 'daemon-reload']));
  return {
    host: name,
    changes: [],
    daemonReload: true,
    units: componentsOn(host).map((component) =>
      affected.has(component) && !createdUnits.includes(unitOf(component))
        ? { component, action: 'restart' as const, reasons: [`files restored from ${dir}`] }
        : { component, action: 'none' as const, reasons: [] },
    ),
  };
}

/** One line, exit 2, for anything that is not the exact shape of a run id (../.. included). */
export function checkRunId(runId: string): void {
  if (!RUN_ID.test(runId))
    throw new InputError(
      'run-id',
      `${JSON.stringify(runId)} is not a run id such as 20261130T052500Z-1a2b (see "hardwire rollback --list")`,
    );
}

/** Restores files; the restart phases that follow read ctx.plan and roll with gates. */
export function rollbackPhase(runId: string): Phase {
  return {
    id: 'rollback',
    title: `Restore the files wire run ${runId} overwrote, remove those it created`,
    async run(ctx) {
      checkRunId(runId);
      const hosts = await Promise.all(
        ctx.inv.hosts.map((h) => restoreHost(ctx, `${BACKUP_ROOT}/${runId}`, h.name)),
      );
      if (hosts.every((h) => h.units.every((u) => u.action === 'none') && !h.daemonReload)) {
        throw new InputError('run-id', `no host has a backup for run ${runId}`);
      }
      ctx.plan = { hosts, noop: false };
    },
  };
}
