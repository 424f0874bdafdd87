import type { Phase } from '../../../apply/phase.ts';
import type { UpgradeRun } from '../state.ts';
import { buildPlan } from '../../../plan/build.ts';
import { formatSteps, upgradeSteps } from '../../steps.ts';
import { COMPONENTS, type ComponentName } from '../../../components/registry/index.ts';
import { BIN } from '../../../components/models/types.ts';

/** The component whose spec ships the binary at `path` (etcdctl: etcd's). */
function ownerOf(path: string): ComponentName | undefined {
  if (!path.startsWith(`${BIN}/`)) return undefined;
  const name = path.slice(BIN.length + 1);
  return COMPONENTS.find((c) => Object.keys(c.binaries).includes(name))?.name;
}

export function stepsPhase(run: UpgradeRun): Phase {
  return {
    id: 'steps',
    title:
      'Plan the steps: etcd hop by hop, then each component in version-skew order, one host at a time',
    async run(ctx) {
      // wire's plan at the target: which of the target's files each host lacks.
      ctx.plan = buildPlan(ctx.wants, ctx.facts);
      run.steps = upgradeSteps(
        {
          hosts: ctx.plan.hosts.map((h) => ({
            host: h.host,
            components: ctx.wants.find((w) => w.host === h.host)!.components,
            changes: h.changes,
            running: run.running.get(h.host) ?? {},
          })),
          etcdPath: run.etcdPath,
          hopFiles: (v) =>
            [...run.hops.get(v)!.values()].map((b) => ({
              path: `${BIN}/${b.name}`,
              mode: 0o755,
              sha256: b.sha256,
              readBy: b.name === 'etcd' ? ['etcd' as const] : [],
              kind: 'binary' as const,
            })),
          ownerOf,
        },
        run.to,
      );
      for (const line of formatSteps(run.steps).trimEnd().split('\n')) ctx.log.info(`  ${line}`);
    },
  };
}
