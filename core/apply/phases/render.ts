import type { Phase } from '../phase.ts';
import { renderHostTree } from '../../render/host-tree.ts';
import { writeHostTree } from '../../render/write.ts';
import { citer } from '../../render/citations.ts';

export const renderPhase: Phase = {
  id: 'render',
  title: 'Render host trees',
  async run(ctx) {
    const cite = await citer(ctx.inv.cluster.kubernetesVersion);
    for (const h of ctx.inv.hosts) {
      const node = ctx.profiles.get(h.name);
      // A phase list with render and without preflight is a bug: it would render a VM as a container.
      if (!node)
        throw new Error(`no preflight reading for ${h.name}: run the preflight phase first`);
      const tree = renderHostTree(ctx.inv, h, ctx.pki!.dir, cite, node);
      ctx.trees.set(h.name, tree);
      writeHostTree(ctx.clusterDir, tree);
    }
  },
};
