import type { Phase } from '../../../apply/phase.ts';
import { session } from '../../../apply/context.ts';
import type { UpgradeRun } from '../state.ts';
import type { Running } from '../../steps.ts';
import { specOf, type ComponentName } from '../../../components/registry/index.ts';
import { parseShow, showArgv } from '../../../transport/systemctl.ts';
import { memberVersions } from '../etcd-gate.ts';
import { unitOf } from '../../../../lib/unit.ts';

/**
 * What runs now, read live, not from a local record: each etcd member's version from etcd, and for
 * the others whether the running process's executable (/proc/<pid>/exe, the old inode even after
 * the file was replaced) hashes to the target's binary. A re-run or a resumed run starts from here.
 */
export function runningPhase(run: UpgradeRun): Phase {
  return {
    id: 'running',
    title:
      'Read what each host runs (etcd member versions from etcd; the sha256 of each running executable)',
    async run(ctx) {
      const etcd =
        ctx.inv.etcdHosts.length > 0
          ? await memberVersions(ctx.inv, session(ctx, ctx.inv.etcdHosts[0]!.name))
          : new Map<string, string>();
      await Promise.all(
        ctx.wants.map(async (w) => {
          const s = session(ctx, w.host);
          const others = w.components.filter((c) => c !== 'etcd');
          const shown =
            others.length === 0
              ? []
              : parseShow(
                  (
                    await s.exec(
                      showArgv(
                        others.map((c) => unitOf(c)),
                        ['MainPID'],
                      ),
                      { timeoutMs: 15_000 },
                    )
                  ).stdout,
                );
          const pids = new Map(others.map((c, i) => [c, Number(shown[i]?.MainPID ?? 0)] as const));
          const exes = await s.sha256Many(
            others.filter((c) => pids.get(c)! > 0).map((c) => `/proc/${pids.get(c)}/exe`),
          );
          const r: Running = {};
          if (w.components.includes('etcd')) r.etcd = etcd.get(w.host) ?? 'stopped';
          for (const c of others) {
            const pid = pids.get(c)!;
            const main = Object.keys(specOf(c as ComponentName).binaries)[0]!;
            r[c] =
              pid === 0
                ? 'stopped'
                : exes.get(`/proc/${pid}/exe`) === ctx.binaries.get(main)?.sha256
                  ? 'target'
                  : 'other';
          }
          run.running.set(w.host, r);
          ctx.log.info(
            `  ${w.host}: ${Object.entries(r)
              .map(([c, v]) => `${c} ${v === 'target' ? run.to : v}`)
              .join(', ')}`,
          );
        }),
      );
    },
  };
}
