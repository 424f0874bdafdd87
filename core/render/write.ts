// Mirrors host trees under <state>/<cluster>/hosts/<host>/, pruning files a host no longer gets.
import { readdirSync, rmSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { writeFileAtomic, type WriteResult } from '../../lib/fsx.ts';
import type { HostTree } from './host-tree.ts';

export interface TreeWrite {
  host: string;
  dir: string;
  changed: { path: string; result: WriteResult | 'removed' }[];
}

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name));
}

export function writeHostTree(clusterDir: string, tree: HostTree): TreeWrite {
  const dir = join(clusterDir, 'hosts', tree.host.name);
  const want = new Set(tree.files.map((f) => join(dir, f.path)));
  const changed: TreeWrite['changed'] = [];
  for (const f of tree.files) {
    const r = writeFileAtomic(join(dir, f.path), f.content, f.mode);
    if (r !== 'unchanged') changed.push({ path: f.path, result: r });
  }
  for (const existing of listFiles(dir)) {
    if (!want.has(existing)) {
      rmSync(existing);
      changed.push({ path: `/${relative(dir, existing)}`, result: 'removed' });
    }
  }
  return { host: tree.host.name, dir, changed };
}
