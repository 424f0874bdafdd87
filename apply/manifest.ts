// /var/lib/hardwire/installed.json on each host: the paths hardwire installed there.
import { HOST_STATE_DIR } from '../lib/constants.ts';
import { createHash } from 'node:crypto';
import type { HostFile } from '../render/host-tree.ts';

export const MANIFEST_PATH = `${HOST_STATE_DIR}/installed.json`;

export function installedManifest(paths: string[]): HostFile {
  const content = Buffer.from(`${JSON.stringify({ paths: [...paths].sort() }, null, 2)}\n`);
  return { path: MANIFEST_PATH, content, mode: 0o644, sha256: createHash('sha256').update(content).digest('hex'), readBy: [] };
}

export function parseManifest(text: string): string[] {
  const doc = JSON.parse(text) as { paths?: unknown };
  if (!Array.isArray(doc.paths) || !doc.paths.every((p) => typeof p === 'string' && p.startsWith('/'))) throw new Error(`${MANIFEST_PATH} is malformed`);
  return doc.paths as string[];
}
