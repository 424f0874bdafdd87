import type { Phase } from '../phase.ts';
import { binariesFor } from '../../components/registry/index.ts';
import { ensureImages, ensureRegistryImages } from '../../components/image-build.ts';
import { resolveBinaries } from '../binaries.ts';
import { BIN } from '../../components/models/types.ts';

export const binariesPhase: Phase = {
  id: 'binaries',
  title: 'Resolve component binaries (build or verify the cache)',
  async run(ctx) {
    const names = [...new Set(ctx.inv.hosts.flatMap((h) => binariesFor(h).map((b) => b.name)))];
    ctx.binaries = await resolveBinaries(ctx.inv, names, ctx.log, ctx.opts.verifyHashes === true);
    // Workers also get the locally built images, which containerd imports when it starts.
    const images =
      ctx.inv.workerHosts.length > 0
        ? await ensureImages(ctx.log, ctx.inv.doc.components?.from)
        : [];
    for (const i of images) ctx.localFiles.set(i.hostPath, i.path);
    // The registry's host gets the images it serves; its ExecStartPost pushes them into it.
    const served = ctx.inv.hosts.some((h) => h.isRegistry)
      ? await ensureRegistryImages(ctx.log, ctx.inv.doc.components?.from)
      : [];
    for (const i of served) ctx.localFiles.set(i.hostPath, i.path);
    ctx.wants = ctx.inv.hosts.map((h) => {
      const tree = ctx.trees.get(h.name)!;
      const files = [
        ...binariesFor(h).map((b) => ({
          path: `${BIN}/${b.name}`,
          mode: 0o755,
          sha256: ctx.binaries.get(b.name)!.sha256,
          readBy: b.readBy,
          kind: 'binary' as const,
        })),
        ...(h.isWorker
          ? images.map((i) => ({
              path: i.hostPath,
              mode: 0o644,
              sha256: i.sha256,
              readBy: ['containerd' as const],
              kind: 'binary' as const,
            }))
          : []),
        ...(h.isRegistry
          ? served.map((i) => ({
              path: i.hostPath,
              mode: 0o644,
              sha256: i.sha256,
              readBy: ['registry' as const],
              kind: 'binary' as const,
            }))
          : []),
        ...tree.files.map((f) => ({
          path: f.path,
          mode: f.mode,
          sha256: f.sha256,
          readBy: f.readBy,
          kind: 'file' as const,
        })),
      ];
      return { host: h.name, components: tree.components, files };
    });
  },
};
