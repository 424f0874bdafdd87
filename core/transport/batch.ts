// Many files to one host in one SSH exec: a tar stream on stdin, unpacked beside each target as
// "<path>.hardwire-new" (mode 0600 while it is incomplete), then each one given its mode and owner,
// fsynced, and renamed over its target. Each target is its old version or its new one at every
// moment; a run killed halfway leaves only .hardwire-new files, which the next push overwrites.
import { createReadStream } from 'node:fs';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pack as tarPack } from 'tar-stream';

export interface BatchFile {
  path: string;
  mode: number;
  owner?: string;
  /** The bytes, or a local file to stream them from (binaries are not read into memory). */
  data: Buffer | { file: string; size: number };
}

export const NEW_SUFFIX = '.hardwire-new';
// Large reads: ssh2 encrypts and sends each chunk as it comes, and 64 KiB chunks cost it about a third of its throughput.
const READ_CHUNK = 1 << 20;

export const BATCH_SCRIPT = [
  'set -e',
  'tar -x --no-same-owner --no-same-permissions -C / -f -',
  'i=0; for a do i=$((i+1)); case $((i % 3)) in 1) p=$a;; 2) m=$a;; 0) chmod "$m" "$p.hardwire-new"; if [ -n "$a" ]; then chown -- "$a" "$p.hardwire-new"; fi;; esac; done',
  'i=0; for a do i=$((i+1)); [ $((i % 3)) -eq 1 ] && sync -- "$a.hardwire-new" 2>/dev/null || true; done',
  'i=0; for a do i=$((i+1)); if [ $((i % 3)) -eq 1 ]; then mv -f -- "$a.hardwire-new" "$a"; fi; done',
].join('\n');

/** Arguments for BATCH_SCRIPT: path, octal mode, owner, for each file. */
export function batchArgs(files: BatchFile[]): string[] {
  return files.flatMap((f) => [f.path, f.mode.toString(8), f.owner ?? '']);
}

/** The tar stream of the files, each under "<path>.hardwire-new" relative to /. */
export function tarOf(files: BatchFile[]): Readable {
  const p = tarPack();
  const out = new PassThrough();
  void (async () => {
    for (const f of files) {
      const name = `${f.path.replace(/^\/+/, '')}${NEW_SUFFIX}`;
      const data = f.data;
      if (Buffer.isBuffer(data)) {
        await new Promise<void>((resolve, reject) =>
          p.entry({ name, mode: 0o600, size: data.length }, data, (err) =>
            err ? reject(err) : resolve(),
          ),
        );
      } else {
        await pipeline(
          createReadStream(data.file, { highWaterMark: READ_CHUNK }),
          p.entry({ name, mode: 0o600, size: data.size }),
        );
      }
    }
    p.finalize();
  })().catch((err: unknown) => p.destroy(err instanceof Error ? err : new Error(String(err))));
  p.pipe(out);
  return out;
}
