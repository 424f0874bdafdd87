import { statSync } from 'node:fs';
import type { Phase } from '../phase.ts';
import type { WireContext } from '../context.ts';
import { StepError } from '../../lib/errors.ts';
import { BIN } from '../../components/models/types.ts';
import { PENDING_DIR } from '../facts.ts';
import { recordHost } from '../record.ts';
import type { FileChange } from '../../plan/types.ts';
import { BACKUP_RECORD, BACKUP_ROOT, KEEP_BACKUPS, PRUNE_SCRIPT, type BackupRecord } from '../backup.ts';

const COPY_SCRIPT = 'set -e; for p in "$@"; do mkdir -p -- "$BK$(dirname -- "$p")"; cp -p -- "$p" "$BK$p"; done';

// Keep the previous version of every file this run overwrites, and a list of the files it creates,
// under /var/lib/hardwire/backup/<run-id>/ on the host: `hardwire rollback <run-id>` undoes the run.
async function backup(ctx: WireContext, host: string, changes: FileChange[]): Promise<void> {
  if (changes.length === 0) return;
  const dir = `${BACKUP_ROOT}/${ctx.runId}`;
  const overwritten = changes.filter((c) => c.reason !== 'missing');
  const record: BackupRecord = {
    runId: ctx.runId,
    overwritten: overwritten.map((c) => ({ path: c.path, readBy: c.readBy })),
    created: changes.filter((c) => c.reason === 'missing').map((c) => ({ path: c.path, readBy: c.readBy })),
  };
  await ctx.wet.run(host, `back up ${overwritten.length} file(s) to ${dir}`, async (s) => {
    await s.exec(['mkdir', '-p', '-m', '0700', dir]);
    if (overwritten.length > 0) await s.exec(['env', `BK=${dir}`, 'sh', '-c', COPY_SCRIPT, 'sh', ...overwritten.map((c) => c.path)]);
    await s.writeFileAtomic(`${dir}/${BACKUP_RECORD}`, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
    await s.exec(['sh', '-c', PRUNE_SCRIPT, 'sh', BACKUP_ROOT, String(KEEP_BACKUPS)]);
  });
  if (!ctx.opts.dryRun) ctx.backups.push(host);
}

async function pushHost(ctx: WireContext, host: string): Promise<void> {
  const plan = ctx.plan!.hosts.find((h) => h.host === host)!;
  const tree = ctx.trees.get(host)!;
  // Mark restarts before touching files: if this run dies after the push, the next run still
  // sees that the running process has not loaded the new files.
  for (const u of plan.units.filter((x) => x.action === 'restart')) {
    await ctx.wet.run(host, `mark ${u.component} restart pending`, (s) => s.writeFileAtomic(`${PENDING_DIR}/${u.component}`, `${u.reasons.join('\n')}\n`, { mode: 0o644 }));
  }
  await backup(ctx, host, plan.changes);
  // Binaries one by one, streamed from the cache (never read into memory, never in a dry run); the
  // rendered files then in one tar stream (transport/batch.ts), each still renamed atomically.
  for (const c of plan.changes.filter((x) => x.kind === 'binary')) {
    const file = ctx.binaries.get(c.path.slice(BIN.length + 1))!.path;
    await ctx.wet.run(host, `write ${c.path} (${c.reason})`, (s) => s.writeFilesAtomic([{ path: c.path, mode: c.mode, owner: 'root:root', data: { file, size: statSync(file).size } }]));
  }
  const small = plan.changes.filter((x) => x.kind !== 'binary');
  await ctx.wet.runAll(host, small.map((c) => `write ${c.path} (${c.reason})`), (s) => s.writeFilesAtomic(small.map((c) => (
    { path: c.path, mode: c.mode, owner: 'root:root', data: tree.files.find((f) => f.path === c.path)!.content }))));
  if (plan.daemonReload) await ctx.wet.run(host, 'systemctl daemon-reload', (s) => s.exec(['systemctl', 'daemon-reload']));
  const toEnable = plan.units.filter((u) => !ctx.facts.get(host)?.units.get(u.component)?.enabled).map((u) => `${u.component}.service`);
  if (toEnable.length > 0) await ctx.wet.run(host, `systemctl enable ${toEnable.join(' ')}`, (s) => s.exec(['systemctl', 'enable', '--quiet', ...toEnable]));
  await recordHost(ctx, host);
}

export const pushPhase: Phase = {
  id: 'push',
  // Runs in a dry run too: every write goes through Wet, which records it and writes nothing.
  title: 'Push files and binaries (atomic, only what changed)',
  async run(ctx) {
    const results = await Promise.allSettled(ctx.plan!.hosts.map((h) => pushHost(ctx, h.host)));
    const bad = results.flatMap((r, i) => (r.status === 'rejected' ? [{ host: ctx.plan!.hosts[i]!.host, err: r.reason as unknown }] : []));
    if (bad.length > 0) {
      const { host, err } = bad[0]!;
      if (err instanceof StepError) throw err;
      throw new StepError('push', err instanceof Error ? err.message : String(err), { host });
    }
  },
};
