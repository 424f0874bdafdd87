// The process model per node (issue 23): one reader for every plane's hosts. One shell loop over
// /proc reads each process's stat line (pid, comm, ppid), its cgroup (the kubepods path if it has
// one, else its systemd one) and its cmdline; read twice a second apart, only what is in both
// stays (proc-tree.ts settled), so a probe or an nft run that lives milliseconds is not reported.
import type { Session } from '../../core/transport/index.ts';
import { PROC_DUMP } from '../../core/transport/read-scripts.ts';
import type { PlaneData } from './types.ts';
import {
  buildTree,
  countsOf,
  parseProcDump,
  settled,
  type HostProcs,
  type ProcInfo,
} from './proc-tree.ts';

/** One read of every process on the host. */
export async function dump(s: Pick<Session, 'exec'>): Promise<ProcInfo[]> {
  const r = await s.exec(['sh', '-c', PROC_DUMP], { allowFail: true, timeoutMs: 60_000 });
  return parseProcDump(r.stdout);
}

/** Every process on the host but SSH sessions, as a tree from PID 1. */
export async function readHostProcs(
  s: Pick<Session, 'exec' | 'host'>,
  host: string,
  role: string,
): Promise<HostProcs> {
  const first = await dump(s);
  await new Promise((r) => setTimeout(r, 1000));
  const procs = buildTree(settled(first, await dump(s)));
  return {
    host,
    role,
    source: `/proc/*/{stat,cgroup,cmdline} on ${s.host.name}, read twice 1 s apart`,
    procs,
    counts: countsOf(procs),
  };
}

/** Each session's tree, each read a step of the plane; a host that cannot be read becomes a note, not a failed plane. */
export async function readPlaneProcs(
  hosts: { s: Session; host: string; role: string }[],
  plane: Pick<PlaneData, 'notes' | 'steps'>,
): Promise<HostProcs[]> {
  const out: HostProcs[] = [];
  for (const h of hosts) {
    const t0 = performance.now();
    try {
      const read = await readHostProcs(h.s, h.host, h.role);
      out.push(read);
      plane.steps.push({
        step: `read the process tree of ${h.host} from /proc`,
        ms: Math.round(performance.now() - t0),
        ok: true,
        output: `${read.procs.length} processes`,
      });
    } catch (err) {
      plane.notes.push(`process tree of ${h.host} not read: ${(err as Error).message}`);
    }
  }
  return out;
}
