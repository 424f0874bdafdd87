// etcd snapshots: taken from a healthy member over mTLS, copied to the operator's state dir,
// verified offline with etcdutl. Never lose data by our own hand.
import { mkdirSync, readdirSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Inventory, Host } from '../inventory/load.ts';
import type { Session } from '../transport/index.ts';
import { etcdctlArgv } from '../gates/etcd.ts';
import { writeFileAtomic } from '../lib/fsx.ts';
import { StepError } from '../lib/errors.ts';
import { run } from '../lib/proc.ts';
import { ensureBinary } from '../components/binaries/index.ts';
import type { SnapshotInfo } from '../apply/context.ts';

export const REMOTE_SNAPSHOT_DIR = '/var/lib/hardwire/snapshots';

export function snapshotDir(clusterDir: string): string {
  return join(clusterDir, 'snapshots');
}

export async function snapshotStatus(file: string): Promise<{ hash: number; revision: number; totalKey: number; totalSize: number }> {
  const etcdutl = await ensureBinary('etcdutl');
  // A failing etcdutl throws a ProcError (step 'etcd snapshot verify', its stderr as detail).
  const { stdout } = await run(etcdutl.path, ['snapshot', 'status', file, '-w', 'json'], { step: 'etcd snapshot verify', label: `etcdutl snapshot status ${file}` });
  try {
    return JSON.parse(stdout) as { hash: number; revision: number; totalKey: number; totalSize: number };
  } catch (err) {
    throw new StepError('etcd snapshot verify', `etcdutl snapshot status ${file} printed no JSON: ${String(err)}`);
  }
}

/** Saves a snapshot from `host` (one endpoint: etcdctl refuses several), copies and verifies it. */
export async function saveSnapshot(inv: Inventory, host: Host, s: Session, clusterDir: string, name: string): Promise<SnapshotInfo> {
  const remote = `${REMOTE_SNAPSHOT_DIR}/${name}.db`;
  await s.exec(['mkdir', '-p', '-m', '0700', REMOTE_SNAPSHOT_DIR]);
  const argv = etcdctlArgv(inv, 'snapshot', 'save', remote).map((a) => (a.startsWith('--endpoints=') ? `--endpoints=https://${host.address}:2379` : a));
  await s.exec(argv, { timeoutMs: 120_000 });
  const data = await s.readFile(remote);
  await s.exec(['rm', '-f', '--', remote]);
  const file = join(snapshotDir(clusterDir), `${name}.db`);
  mkdirSync(snapshotDir(clusterDir), { recursive: true, mode: 0o700 });
  writeFileAtomic(file, data, 0o600); // holds every key, Secrets included (encrypted, but still)
  const st = await snapshotStatus(file);
  return { file, from: host.name, revision: st.revision, totalKey: st.totalKey, hash: st.hash, sizeBytes: data.length };
}

export function listSnapshots(clusterDir: string): { file: string; name: string; sizeBytes: number; mtime: string }[] {
  const dir = snapshotDir(clusterDir);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => f.endsWith('.db')).sort().map((f) => {
    const st = statSync(join(dir, f));
    return { file: join(dir, f), name: f.slice(0, -3), sizeBytes: st.size, mtime: st.mtime.toISOString() };
  });
}
