// /var/lib/hardwire/installed.json on each host: every file hardwire installed there, with the
// sha256 it had and the stat it had when written. A later run trusts the recorded sha256 of a file
// whose stat is unchanged (size, inode, mtime and ctime, as git's index does) and hashes the rest.
// ctime moves on any write, chmod or rename and cannot be set back, so a file changed behind
// hardwire's back is always re-hashed. teardown removes exactly the paths listed here.
import { HOST_STATE_DIR } from '../../lib/constants.ts';
import type { ReadSession } from '../transport/index.ts';

export const MANIFEST_PATH = `${HOST_STATE_DIR}/installed.json`;

export interface FileStat {
  size: number;
  ino: number;
  mtime: string;
  ctime: string;
  mode: number;
  owner: string;
}
export interface RecordEntry extends FileStat {
  sha256: string;
}
export type HostRecord = Map<string, RecordEntry>;

/** Paths of a record; reads the first format ({paths}) too, from hosts wired before records had stats. */
export function parseManifest(text: string): string[] {
  return [...parseRecord(text).keys()];
}

export function parseRecord(text: string): HostRecord {
  const doc = JSON.parse(text) as { paths?: unknown; files?: unknown };
  if (
    Array.isArray(doc.paths) &&
    doc.paths.every((p) => typeof p === 'string' && p.startsWith('/'))
  ) {
    return new Map(
      (doc.paths as string[]).map((p) => [
        p,
        { sha256: '', size: -1, ino: -1, mtime: '', ctime: '', mode: -1, owner: '' },
      ]),
    );
  }
  if (!Array.isArray(doc.files)) throw new Error(`${MANIFEST_PATH} is malformed`);
  const out: HostRecord = new Map();
  for (const f of doc.files as (RecordEntry & { path: string })[]) {
    if (
      typeof f.path !== 'string' ||
      !f.path.startsWith('/') ||
      !/^([0-9a-f]{64})?$/.test(f.sha256)
    )
      throw new Error(`${MANIFEST_PATH} is malformed`);
    const { path, ...entry } = f;
    out.set(path, entry);
  }
  return out;
}

export function formatRecord(record: HostRecord): string {
  const files = [...record]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([path, e]) => ({ path, ...e }));
  return `${JSON.stringify({ version: 2, files }, null, 1)}\n`;
}

export async function readRecord(s: ReadSession): Promise<HostRecord> {
  const r = await s.exec(['cat', MANIFEST_PATH], { allowFail: true, timeoutMs: 15_000 });
  if (r.code !== 0) return new Map();
  try {
    return parseRecord(r.stdout);
  } catch {
    return new Map(); // an unreadable record only costs a full re-hash
  }
}

/** One `stat` for all paths; missing files are simply absent from the result. */
export async function statMany(s: ReadSession, paths: string[]): Promise<Map<string, FileStat>> {
  const out = new Map<string, FileStat>();
  if (paths.length === 0) return out;
  // %.9Y/%.9Z: mtime and ctime with nanoseconds (coreutils >= 8.32). Fields are tab-separated; paths come last.
  const r = await s.exec(
    ['stat', '--printf', '%s\t%i\t%.9Y\t%.9Z\t%a\t%U:%G\t%n\n', '--', ...paths],
    { allowFail: true, timeoutMs: 15_000 },
  );
  for (const line of r.stdout.split('\n')) {
    const [size, ino, mtime, ctime, mode, owner, ...rest] = line.split('\t');
    const path = rest.join('\t');
    if (!path || owner === undefined) continue;
    out.set(path, {
      size: Number(size),
      ino: Number(ino),
      mtime: mtime!,
      ctime: ctime!,
      mode: parseInt(mode!, 8),
      owner,
    });
  }
  return out;
}

export function sameStat(a: FileStat, b: FileStat): boolean {
  return a.size === b.size && a.ino === b.ino && a.mtime === b.mtime && a.ctime === b.ctime;
}
