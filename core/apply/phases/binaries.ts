import type { Phase } from '../phase.ts';
import { binariesFor } from '../../components/registry/index.ts';
import {
  ensureImages,
  ensureRegistryImages,
  type BuiltImage,
} from '../../components/image-build.ts';
import { resolveBinaries } from '../binaries.ts';
import { BIN } from '../../components/models/types.ts';
import type { LocalBinary, WireContext } from '../context.ts';
import { localArch, type Arch } from '../../../lib/arch.ts';

/** The architecture preflight read on the host; this machine's where it was not read (an offline render). */
function archOf(ctx: WireContext, host: string): Arch {
  return ctx.profiles.get(host)?.arch ?? localArch();
}

export const binariesPhase: Phase = {
  id: 'binaries',
  title: "Resolve component binaries for each host's architecture (build or verify the cache)",
  async run(ctx) {
    const archOfHost = new Map(ctx.inv.hosts.map((h) => [h.name, archOf(ctx, h.name)]));
    const arches = [...new Set([localArch(), ...archOfHost.values()])];
    const bins = new Map<Arch, Map<string, LocalBinary>>();
    const images = new Map<Arch, BuiltImage[]>();
    for (const arch of arches) {
      const hosts = ctx.inv.hosts.filter((h) => archOfHost.get(h.name) === arch);
      // This machine's binaries are resolved even with no host of its own: upgrade and the gates use them.
      const names = [
        ...new Set(
          (arch === localArch() ? ctx.inv.hosts : hosts).flatMap((h) =>
            binariesFor(h).map((b) => b.name),
          ),
        ),
      ];
      const got = await resolveBinaries(
        ctx.inv,
        names,
        ctx.log,
        ctx.opts.verifyHashes === true,
        arch,
      );
      bins.set(arch, got);
      for (const b of got.values()) ctx.localFiles.set(b.sha256, b.path);
      // Workers also get the locally built images, which containerd imports when it starts.
      const imgs = hosts.some((h) => h.isWorker)
        ? await ensureImages(ctx.log, ctx.inv.doc.components?.from, undefined, arch)
        : [];
      images.set(arch, imgs);
      for (const i of imgs) ctx.localFiles.set(i.sha256, i.path);
    }
    ctx.binaries = bins.get(localArch())!;
    // The registry's host gets the images it serves (this machine's architecture); its ExecStartPost pushes them into it.
    const served = ctx.inv.hosts.some((h) => h.isRegistry)
      ? await ensureRegistryImages(ctx.log, ctx.inv.doc.components?.from, ctx.inv.addons)
      : [];
    for (const i of served) ctx.localFiles.set(i.sha256, i.path);
    ctx.wants = ctx.inv.hosts.map((h) => {
      const arch = archOfHost.get(h.name)!;
      const tree = ctx.trees.get(h.name)!;
      const files = [
        ...binariesFor(h).map((b) => ({
          path: `${BIN}/${b.name}`,
          mode: 0o755,
          sha256: bins.get(arch)!.get(b.name)!.sha256,
          readBy: b.readBy,
          kind: 'binary' as const,
          arch,
        })),
        ...(h.isWorker
          ? images.get(arch)!.map((i) => ({
              path: i.hostPath,
              mode: 0o644,
              sha256: i.sha256,
              readBy: ['containerd' as const],
              kind: 'binary' as const,
              arch,
            }))
          : []),
        ...(h.isRegistry
          ? served.map((i) => ({
              path: i.hostPath,
              mode: 0o644,
              sha256: i.sha256,
              readBy: ['registry' as const],
              kind: 'binary' as const,
              arch: localArch(),
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
