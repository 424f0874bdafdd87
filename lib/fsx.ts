// Local file writes: atomic (temp + rename), explicit mode, and a no-op when the bytes are equal,
// so a second run changes no byte and no mtime.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
  statSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { randomBytes } from 'node:crypto';

export type WriteResult = 'created' | 'updated' | 'unchanged';

export function writeFileAtomic(path: string, data: string | Buffer, mode = 0o644): WriteResult {
  const buf = typeof data === 'string' ? Buffer.from(data) : data;
  const existed = existsSync(path);
  if (existed && readFileSync(path).equals(buf)) {
    if ((statSync(path).mode & 0o777) !== mode) chmodSync(path, mode);
    return 'unchanged';
  }
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${randomBytes(4).toString('hex')}`;
  writeFileSync(tmp, buf, { mode });
  chmodSync(tmp, mode); // umask may have narrowed it
  renameSync(tmp, path);
  return existed ? 'updated' : 'created';
}

export function readIfExists(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}
