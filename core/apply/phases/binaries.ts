import type { Phase } from '../phase.ts';
import { STARTED_NAMES, binariesFor } from '../../components/registry/index.ts';
import { resolveBinaries } from '../binaries.ts';
import { BIN } from '../../components/models/types.ts';

export const binariesPhase: Phase = {
  id: 'binaries',
  title: 'Resolve component binaries (build or verify the cache)',
  async run(ctx) {
    const names = [...new Set(ctx.inv.hosts.flatMap((h) => binariesFor(h).map((b) => b.name)))];
    ctx.binaries = await resolveBinaries(ctx.inv, names, ctx.log, ctx.opts.verifyHashes === true);
    ctx.wants = ctx.inv.hosts.map((h) => {
      const tree = ctx.trees.get(h.name)!;
      const files = [
        ...binariesFor(h).map((b) => ({ path: `${BIN}/${b.name}`, mode: 0o755, sha256: ctx.binaries.get(b.name)!.sha256, readBy: b.readBy, kind: 'binary' as const })),
        ...tree.files.map((f) => ({ path: f.path, mode: f.mode, sha256: f.sha256, readBy: f.readBy, kind: 'file' as const })),
      ];
      // A component wire does not start yet (spec.notStarted) gets its files but no unit action: no
      // start that no stage runs, no restart mark that nothing clears, and a re-run stays a no-op.
      return { host: h.name, components: tree.components.filter((c) => STARTED_NAMES.includes(c)), files };
    });
  },
};
