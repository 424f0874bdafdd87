// wire never builds or downloads itself: it asks the components capability for verified binaries.
import { ensureAll } from '../components/binaries/index.ts';
import type { BinaryName } from '../components/registry/index.ts';
import type { Inventory } from '../inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import type { LocalBinary } from './context.ts';
import { localArch, type Arch } from '../../lib/arch.ts';

export async function resolveBinaries(
  inv: Inventory,
  names: BinaryName[],
  log: Logger,
  verifyHashes = false,
  arch: Arch = localArch(),
): Promise<Map<string, LocalBinary>> {
  const got = await ensureAll(names, {
    kubernetesVersion: inv.cluster.kubernetesVersion,
    arch,
    ...(inv.doc.components?.from ? { from: inv.doc.components.from } : {}),
    log,
    verifyHashes,
  });
  return new Map(
    got.map((b) => [
      b.name,
      { name: b.name, path: b.path, sha256: b.sha256, version: b.version, source: b.source },
    ]),
  );
}
