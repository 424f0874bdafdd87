import type { Phase } from '../../../apply/phase.ts';
import type { WireContext } from '../../../apply/context.ts';
import type { UpgradeRun } from '../state.ts';
import { ensureAll } from '../../../components/binaries/index.ts';
import { ETCD_NAMES, versionsFor } from '../../../components/binaries/catalog.ts';
import { BIN } from '../../../components/models/types.ts';

/**
 * With --etcd, the last hop is not the version table's etcd for the target, which the binaries
 * phase resolved: the etcd binaries become that version's, in what each host wants too, so the
 * steps and the host records see them as the target's files.
 */
export function retarget(ctx: WireContext, run: UpgradeRun): void {
  const last = run.hops.get(run.etcdPath.at(-1)!)!;
  for (const b of last.values()) {
    ctx.binaries.set(b.name, b);
    ctx.localFiles.set(b.sha256, b.path);
  }
  ctx.wants = ctx.wants.map((w) => ({
    ...w,
    files: w.files.map((f) => {
      const b = last.get(f.path.slice(BIN.length + 1));
      return f.path.startsWith(`${BIN}/`) && b ? { ...f, sha256: b.sha256 } : f;
    }),
  }));
}

/** etcd's binaries at each hop (v3.6.16) other than the table's target, verified from the cache like the rest. */
export function hopBinariesPhase(run: UpgradeRun): Phase {
  const other = () => run.etcdPath.filter((v) => v !== versionsFor(run.to).etcd);
  return {
    id: 'hop-binaries',
    title: 'Resolve the binaries of each etcd hop',
    shouldRun: () => other().length > 0,
    async run(ctx) {
      for (const v of other()) {
        const got = await ensureAll(ETCD_NAMES, { version: v, log: ctx.log });
        run.hops.set(
          v,
          new Map(
            got.map((b) => [
              b.name,
              {
                name: b.name,
                path: b.path,
                sha256: b.sha256,
                version: b.version,
                source: b.source,
              },
            ]),
          ),
        );
      }
      if (run.etcdPath.at(-1) !== versionsFor(run.to).etcd) retarget(ctx, run);
    },
  };
}
