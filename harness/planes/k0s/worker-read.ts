// What the k0s worker runs, read on its host from /proc: the k0sworker unit's process tree (k0s
// worker and the children it supervises, containerd and the kubelet), each containerd shim with the
// containers below it (a shim re-parents itself to PID 1 when containerd starts it), and from that
// tree the kubelet, kube-proxy and CoreDNS processes with their config files.
import type { Session } from '../../../core/transport/index.ts';
import { showUnit } from '../../../core/transport/systemctl.ts';
import { StepError } from '../../../lib/errors.ts';
import { readNodeProcess } from '../node-read.ts';
import { dump } from '../proc-read.ts';
import type { NodeProcess } from '../node-types.ts';
import type { TreeProc, WorkerTree } from './worker-types.ts';

/** The systemd unit `k0s install worker` writes. */
export const WORKER_UNIT = 'k0sworker';

const base = (argv: string[]) => (argv[0] ?? '').split('/').pop() ?? '';

/**
 * Processes under `roots` from a `ps -e -o pid=,ppid=` listing, parents before children, in
 * the order found; `argvOf` gives each one's /proc/<pid>/cmdline (empty: gone or a zombie, skipped).
 */
export function treeFrom(
  table: [number, number][],
  roots: number[],
  argv: Map<number, string[]>,
): TreeProc[] {
  const out: TreeProc[] = [];
  const seen = new Set<number>();
  const visit = (pid: number, ppid: number) => {
    if (seen.has(pid)) return;
    seen.add(pid);
    const a = argv.get(pid) ?? [];
    if (a.length > 0) out.push({ pid, ppid, argv: a });
    for (const [c, p] of table) if (p === pid) visit(c, pid);
  };
  for (const r of roots) visit(r, table.find(([pid]) => pid === r)?.[1] ?? 0);
  return out;
}

/** Reads the unit's tree and every containerd shim's, from /proc on `s`. */
export async function readWorkerTree(s: Session, unit = WORKER_UNIT): Promise<WorkerTree> {
  const mainPid = Number((await showUnit(s, unit, ['MainPID'])).MainPID ?? 0);
  if (!mainPid)
    throw new StepError('compare-k0s', `${unit} has no main PID (not running)`, {
      host: s.host.name,
    });
  // The reader every plane's process model uses (proc-read.ts): pid, ppid and argv in one pass over /proc.
  const procs = await dump(s);
  const table = procs.map((p) => [p.pid, p.ppid] as [number, number]);
  const argv = new Map(procs.map((p) => [p.pid, p.argv]));
  const shims = table
    .filter(([pid]) => base(argv.get(pid) ?? []) === 'containerd-shim-runc-v2')
    .map(([pid]) => pid);
  return { unit, mainPid, procs: treeFrom(table, [mainPid, ...shims], argv) };
}

/** The first process in the tree whose argv[0] ends in `name`. */
export function findProc(tree: WorkerTree, name: string): TreeProc | undefined {
  return tree.procs.find((p) => base(p.argv) === name);
}

export interface WorkerProcs {
  kubelet: NodeProcess;
  kubeProxy?: NodeProcess;
  coredns?: NodeProcess;
}

/** The kubelet (a child of k0s worker), kube-proxy and CoreDNS (in containers), each with its --config / -conf file. */
export async function readWorkerProcs(
  s: Session,
  tree: WorkerTree,
  host: string,
): Promise<WorkerProcs> {
  const kubelet = tree.procs.find((p) => p.ppid === tree.mainPid && base(p.argv) === 'kubelet');
  if (!kubelet)
    throw new StepError('compare-k0s', `no kubelet below ${tree.unit} (pid ${tree.mainPid})`, {
      host,
    });
  const out: WorkerProcs = {
    kubelet: await readNodeProcess(
      s,
      kubelet.pid,
      `${host} (child of k0s worker, pid ${tree.mainPid})`,
    ),
  };
  const proxy = findProc(tree, 'kube-proxy');
  if (proxy)
    out.kubeProxy = await readNodeProcess(
      s,
      proxy.pid,
      `${host}, in its container (kube-proxy DaemonSet)`,
    );
  const dns = findProc(tree, 'coredns');
  if (dns) {
    const p = await readNodeProcess(s, dns.pid, `${host}, in its container (CoreDNS Deployment)`);
    // CoreDNS names its file with -conf, not --config.
    const conf = p.argv[p.argv.indexOf('-conf') + 1];
    if (p.argv.includes('-conf') && conf) {
      const r = await s.exec(['cat', `/proc/${dns.pid}/root${conf}`], { allowFail: true });
      if (r.code === 0)
        Object.assign(p, {
          configPath: conf,
          config: r.stdout,
          configSource: `/proc/${dns.pid}/root${conf} on ${host}`,
        });
    }
    out.coredns = p;
  }
  return out;
}
