import type { Phase } from '../../../apply/phase.ts';
import type { UpgradeRun } from '../state.ts';
import { ensureAll } from '../../../components/binaries/index.ts';
import { ETCD_NAMES } from '../../../components/binaries/catalog.ts';

/** etcd's binaries at each hop before the target's (v3.6.16), verified from the cache like the rest. */
export function hopBinariesPhase(run: UpgradeRun): Phase {
  return {
    id: 'hop-binaries',
    title: 'Resolve the binaries of each etcd hop',
    shouldRun: () => run.etcdPath.length > 1,
    async run(ctx) {
      for (const v of run.etcdPath.slice(0, -1)) {
        const got = await ensureAll(ETCD_NAMES, { version: v, log: ctx.log });
        run.hops.set(v, new Map(got.map((b) => [b.name, { name: b.name, path: b.path, sha256: b.sha256, version: b.version, source: b.source }])));
      }
    },
  };
}
