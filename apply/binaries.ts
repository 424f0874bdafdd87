// wire never builds or downloads itself: it asks the components capability for verified binaries.
import { ensureAll, type ComponentName } from '../components/binaries/index.ts';
import type { Inventory } from '../inventory/load.ts';
import type { Logger } from '../lib/log.ts';
import type { LocalBinary } from './context.ts';

export async function resolveBinaries(inv: Inventory, names: string[], log: Logger): Promise<Map<string, LocalBinary>> {
  const got = await ensureAll(names as ComponentName[], {
    kubernetesVersion: inv.cluster.kubernetesVersion,
    ...(inv.doc.components?.from ? { from: inv.doc.components.from } : {}),
    log,
  });
  return new Map(got.map((b) => [b.name, { name: b.name, path: b.path, sha256: b.sha256, version: b.version, source: b.source }]));
}
