import { statSync } from 'node:fs';
import type { Phase } from '../phase.ts';
import type { WireContext } from '../context.ts';
import { StepError } from '../../../lib/errors.ts';
import { PENDING_DIR } from '../facts.ts';
import { recordHost } from '../record.ts';
import type { FileChange } from '../../plan/types.ts';
import { BACKUP_ROOT, BACKUP_SCRIPT, KEEP_BACKUPS, type BackupRecord } from '../backup.ts';
import { unitOf } from '../../../lib/unit.ts';

// Keep the previous version of every file this run overwrites, and a list of the files it creates,
// under /var/lib/hardwire/backup/<run-id>/ on the host: `hardwire rollback <run-id>` undoes the run.
export async function backup(
  ctx: WireContext,
  host: string,
  changes: FileChange[],
  id = ctx.runId,
): Promise<void> {
  if (changes.length === 0) return;
  const dir = `${BACKUP_ROOT}/${id}`;
  const overwritten = changes.filter((c) => c.reason !== 'missing');
  const record: BackupRecord = {
    runId: id,
    overwritten: overwritten.map((c) => ({ path: c.path, readBy: c.readBy })),
    created: changes
      .filter((c) => c.reason === 'missing')
      .map((c) => ({ path: c.path, readBy: c.readBy })),
  };
  const text = `${JSON.stringify(record, null, 2)}\n`;
  await ctx.wet.run(host, `back up ${overwritten.length} file(s) to ${dir}`, (s) =>
    s.exec(
      [
        'sh',
        '-c',
        BACKUP_SCRIPT,
        'sh',
        dir,
        String(KEEP_BACKUPS),
        String(Buffer.byteLength(text)),
        ...overwritten.map((c) => c.path),
      ],
      { stdin: text },
    ),
  );
  if (!ctx.opts.dryRun) ctx.backups.push(host);
}

/** The local file a binary change sends, found by its content: each host's architecture has its own. */
export function cached(
  ctx: WireContext,
  f: { path: string; sha256: string },
): { file: string; size: number } {
  const file = ctx.localFiles.get(f.sha256);
  if (!file)
    throw new StepError(
      `push ${f.path}`,
      `no local file hashes to ${f.sha256}; run the binaries phase first`,
    );
  return { file, size: statSync(file).size };
}

async function pushHost(ctx: WireContext, host: string): Promise<void> {
  const plan = ctx.plan!.hosts.find((h) => h.host === host)!;
  const tree = ctx.trees.get(host)!;
  // Mark restarts before touching files: if this run dies after the push, the next run still
  // sees that the running process has not loaded the new files.
  for (const u of plan.units.filter((x) => x.action === 'restart')) {
    await ctx.wet.run(host, `mark ${u.component} restart pending`, (s) =>
      s.writeFileAtomic(`${PENDING_DIR}/${u.component}`, `${u.reasons.join('\n')}\n`, {
        mode: 0o644,
      }),
    );
  }
  await backup(ctx, host, plan.changes);
  // Binaries and rendered files in one tar stream (transport/batch.ts), as the floor sends them: binaries
  // streamed from the cache (never read into memory), each file renamed atomically only after the
  // whole stream has landed and been fsynced, so a run killed mid-stream renames nothing.
  await ctx.wet.runAll(
    host,
    plan.changes.map((c) => `write ${c.path} (${c.reason})`),
    (s) =>
      s.writeFilesAtomic(
        plan.changes.map((c) => ({
          path: c.path,
          mode: c.mode,
          owner: 'root:root',
          data:
            c.kind === 'binary'
              ? cached(ctx, c)
              : tree.files.find((f) => f.path === c.path)!.content,
        })),
      ),
  );
  const toEnable = plan.units
    .filter((u) => !ctx.facts.get(host)?.units.get(u.component)?.enabled)
    .map((u) => unitOf(u.component));
  await ctx.wet.runCommands(host, [
    ...(plan.daemonReload
      ? [{ msg: 'systemctl daemon-reload', argv: ['systemctl', 'daemon-reload'] }]
      : []),
    // enable reloads systemd by itself, unless told that the daemon-reload just before it already did.
    ...(toEnable.length > 0
      ? [
          {
            msg: `systemctl enable ${toEnable.join(' ')}`,
            argv: [
              'systemctl',
              'enable',
              '--quiet',
              ...(plan.daemonReload ? ['--no-reload'] : []),
              ...toEnable,
            ],
          },
        ]
      : []),
  ]);
}

// The host record only spares the next run some hashing (a missing or stale one means re-hashing),
// so it is written while the components start, and awaited before the connections close.
const records = new WeakMap<WireContext, Promise<PromiseSettledResult<void>[]>>();

export const pushPhase: Phase = {
  id: 'push',
  // Runs in a dry run too: every write goes through Wet, which records it and writes nothing.
  title: 'Push files and binaries (atomic, only what changed)',
  async run(ctx) {
    const results = await Promise.allSettled(ctx.plan!.hosts.map((h) => pushHost(ctx, h.host)));
    records.set(
      ctx,
      Promise.allSettled(
        ctx
          .plan!.hosts.filter((_, i) => results[i]!.status === 'fulfilled')
          .map((h) => recordHost(ctx, h.host)),
      ),
    );
    const bad = results.flatMap((r, i) =>
      r.status === 'rejected' ? [{ host: ctx.plan!.hosts[i]!.host, err: r.reason as unknown }] : [],
    );
    if (bad.length > 0) {
      const { host, err } = bad[0]!;
      if (err instanceof StepError) throw err;
      throw new StepError('push', err instanceof Error ? err.message : String(err), { host });
    }
  },
  async cleanup(ctx) {
    for (const r of (await records.get(ctx)) ?? []) {
      if (r.status === 'rejected')
        ctx.log.info(
          `  host record not updated (the next run hashes those files again): ${r.reason instanceof Error ? r.reason.message : String(r.reason)}`,
        );
    }
  },
};
