// etcd snapshots: taken from a healthy member over mTLS, copied to the operator's state dir,
// verified offline with etcdutl. Never lose data by our own hand.
import { mkdirSync, readdirSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Inventory, Host } from '../inventory/load.ts';
import type { ReadSession } from '../transport/index.ts';
import type { Wet } from './wet.ts';
import { etcdctlArgv } from '../gates/etcd.ts';
import { writeFileAtomic } from '../../lib/fsx.ts';
import { StepError } from '../../lib/errors.ts';
import { run } from '../../lib/proc.ts';
import { ETCD_CLIENT_PORT, HOST_STATE_DIR } from '../../lib/constants.ts';
import { ensureBinary } from '../components/binaries/index.ts';
import type { SnapshotInfo } from './context.ts';

export const REMOTE_SNAPSHOT_DIR = `${HOST_STATE_DIR}/snapshots`;

export function snapshotDir(clusterDir: string): string {
  return join(clusterDir, 'snapshots');
}

/** etcdutlPath: a newer etcdutl than the pinned one, for a snapshot of a newer etcd (an upgrade's). */
export async function snapshotStatus(
  file: string,
  etcdutlPath?: string,
): Promise<{ hash: number; revision: number; totalKey: number; totalSize: number }> {
  const etcdutl = etcdutlPath ? { path: etcdutlPath } : await ensureBinary('etcdutl');
  // A failing etcdutl throws a ProcError (step 'etcd snapshot verify', its stderr as detail).
  const { stdout } = await run(etcdutl.path, ['snapshot', 'status', file, '-w', 'json'], {
    step: 'etcd snapshot verify',
    label: `etcdutl snapshot status ${file}`,
  });
  try {
    return JSON.parse(stdout) as {
      hash: number;
      revision: number;
      totalKey: number;
      totalSize: number;
    };
  } catch (err) {
    throw new StepError(
      'etcd snapshot verify',
      `etcdutl snapshot status ${file} printed no JSON: ${String(err)}`,
    );
  }
}

/** Saves a snapshot from `host` (one endpoint: etcdctl refuses several), copies and verifies it. */
/** Only for a real run: the snapshot is written on the host (through Wet) before it is copied here. */
export async function saveSnapshot(
  inv: Inventory,
  host: Host,
  s: ReadSession,
  wet: Wet,
  clusterDir: string,
  name: string,
  etcdutlPath?: string,
): Promise<SnapshotInfo> {
  if (wet.dryRun) throw new Error('saveSnapshot called in a dry run');
  const remote = `${REMOTE_SNAPSHOT_DIR}/${name}.db`;
  const argv = etcdctlArgv(inv, 'snapshot', 'save', remote).map((a) =>
    a.startsWith('--endpoints=') ? `--endpoints=https://${host.address}:${ETCD_CLIENT_PORT}` : a,
  );
  await wet.run(host.name, `etcdctl snapshot save ${remote}`, async (w) => {
    await w.exec(['mkdir', '-p', '-m', '0700', REMOTE_SNAPSHOT_DIR]);
    await w.exec(argv, { timeoutMs: 120_000 });
  });
  const data = await s.readFile(remote);
  await wet.run(host.name, `remove ${remote} (copied to the operator)`, (w) =>
    w.exec(['rm', '-f', '--', remote]),
  );
  const file = join(snapshotDir(clusterDir), `${name}.db`);
  mkdirSync(snapshotDir(clusterDir), { recursive: true, mode: 0o700 });
  writeFileAtomic(file, data, 0o600); // holds every key, Secrets included (encrypted, but still)
  const st = await snapshotStatus(file, etcdutlPath);
  return {
    file,
    from: host.name,
    revision: st.revision,
    totalKey: st.totalKey,
    hash: st.hash,
    sizeBytes: data.length,
  };
}

export function listSnapshots(
  clusterDir: string,
): { file: string; name: string; sizeBytes: number; mtime: string }[] {
  const dir = snapshotDir(clusterDir);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.db'))
    .sort()
    .map((f) => {
      const st = statSync(join(dir, f));
      return {
        file: join(dir, f),
        name: f.slice(0, -3),
        sizeBytes: st.size,
        mtime: st.mtime.toISOString(),
      };
    });
}
