// One step of `upgrade apply` on one host: back up what it overwrites, write the new files,
// restart each component and gate it. A failed gate restores that host's files from the backup,
// restarts the same components on them and gates them again, then stops the run naming the gate
// and its error. Every host change goes through Wet, so a dry run records the step and writes nothing.
import type { WireContext } from '../../apply/context.ts';
import { backup, cached } from '../../apply/phases/push.ts';
import { restoreHost } from '../../apply/phases/rollback.ts';
import { BACKUP_ROOT } from '../../apply/backup.ts';
import { specOf, type ComponentName } from '../../components/registry/index.ts';
import { StepError } from '../../../lib/errors.ts';
import type { BatchFile } from '../../transport/batch.ts';
import type { UpgradeStep } from '../steps.ts';
import { etcdMemberGate } from './etcd-gate.ts';
import { unitOf } from '../../../lib/unit.ts';

export interface StepDeps {
  /** Local file of a hop's binary (etcd v3.6.16), by its host path. */
  hopFile: (version: string, path: string) => { file: string; size: number };
}

function data(
  ctx: WireContext,
  step: UpgradeStep,
  f: UpgradeStep['files'][number],
  deps: StepDeps,
): BatchFile['data'] {
  if (f.reason === 'hop') return deps.hopFile(step.version.replace(/^etcd /, ''), f.path);
  if (f.kind === 'binary') return cached(ctx, f);
  return ctx.trees.get(step.host)!.files.find((x) => x.path === f.path)!.content;
}

async function write(
  ctx: WireContext,
  step: UpgradeStep,
  id: string,
  deps: StepDeps,
): Promise<void> {
  const { host, files } = step;
  // A hop's binaries overwrite what is there: backed up as any changed file.
  await backup(
    ctx,
    host,
    files.map((f) => (f.reason === 'hop' ? { ...f, reason: 'changed' as const } : f)),
    id,
  );
  await ctx.wet.runAll(
    host,
    files.map((f) => `write ${f.path} (${f.reason === 'hop' ? step.version : f.reason})`),
    (s) =>
      s.writeFilesAtomic(
        files.map((f) => ({
          path: f.path,
          mode: f.mode,
          owner: 'root:root',
          data: data(ctx, step, f, deps),
        })),
      ),
  );
  if (files.some((f) => f.path.startsWith('/etc/systemd/system/')))
    await ctx.wet.run(host, 'systemctl daemon-reload', (s) =>
      s.exec(['systemctl', 'daemon-reload']),
    );
}

async function restartAndGate(
  ctx: WireContext,
  host: string,
  c: ComponentName,
  etcdVersion: string | undefined,
): Promise<void> {
  const unit = unitOf(c);
  await ctx.wet.run(host, `systemctl restart ${unit}`, async (s) => {
    await s.exec(['systemctl', 'restart', unit], { timeoutMs: 150_000 });
    ctx.restarted.push({ host, unit, action: 'restart' });
  });
  if (ctx.opts.dryRun) return;
  if (c === 'etcd') await etcdMemberGate(ctx, host, etcdVersion);
  else await specOf(c).gate.wait(ctx, [host]);
}

const gateName = (c: ComponentName) =>
  c === 'etcd' ? 'etcd health and member version' : `${c}: ${specOf(c).gate.proves}`;

export async function runStep(
  ctx: WireContext,
  step: UpgradeStep,
  index: number,
  deps: StepDeps,
): Promise<void> {
  const id = `${ctx.runId}.${String(index).padStart(2, '0')}`;
  await write(ctx, step, id, deps);
  const etcdVersion = step.version.startsWith('etcd ') ? step.version.slice(5) : undefined;
  for (const c of step.restart) {
    try {
      await restartAndGate(ctx, step.host, c, etcdVersion);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      ctx.log.warn(`[${step.host}] gate ${gateName(c)} failed: ${why}; rolling ${step.host} back`);
      await rollBack(ctx, step, id);
      throw new StepError(
        `upgrade ${c}`,
        `gate "${gateName(c)}" failed on ${step.host} at ${step.version}, so ${step.host} was rolled back to its old files and binaries (${BACKUP_ROOT}/${id}) and the roll stopped there: ${why}`,
        {
          host: step.host,
          ...(err instanceof StepError ? { detail: err.detail } : {}),
        },
      );
    }
  }
}

/** The host's files back from this step's backup, its components restarted on them and gated (no version to expect). */
async function rollBack(ctx: WireContext, step: UpgradeStep, id: string): Promise<void> {
  await restoreHost(ctx, `${BACKUP_ROOT}/${id}`, step.host);
  for (const c of step.restart) await restartAndGate(ctx, step.host, c, undefined);
}
