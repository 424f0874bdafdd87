// The process model per node (issue 23), the pure half: a host's /proc as one dump (each process's
// stat line, cgroup and cmdline; planes/proc-read.ts reads it over SSH) turned into a tree rooted at
// PID 1, each process labelled with what runs it: a systemd unit (from its cgroup), k0s (a k0s
// parent), a containerd shim (re-parented to PID 1), or the kubelet (a container in a Pod's
// kubepods cgroup, below a shim). Nothing is inferred from a plane's config: only ppid, comm, argv
// and cgroup as the host reports them.

export interface ProcInfo {
  pid: number;
  ppid: number;
  comm: string;
  argv: string[];
  cgroup: string;
}

export type ProcKind = 'init' | 'unit' | 'k0s-child' | 'shim' | 'container' | 'child';

export interface ProcNode extends ProcInfo {
  depth: number;
  kind: ProcKind;
  /** What starts and watches it, in words: "systemd unit kubelet.service", "k0s (pid 212)", "Pod 3f2a… (kubelet), shim 1201". */
  under: string;
  /** A container's Pod UID, from its kubepods cgroup. */
  pod?: string;
}

export interface HostProcs {
  host: string;
  /** What this host is in its plane: "control plane and worker", "k0s controller (single)", "k0s worker". */
  role: string;
  source: string;
  procs: ProcNode[];
  counts: { units: number; k0sChildren: number; shims: number; containers: number; pods: number };
}

const base = (argv: string[], comm: string) => (argv[0] ?? comm).split('/').pop() || comm;

/**
 * One line of the dump: `<stat line>\t<cgroup path>\t<cmdline, NUL as \x01>`. The stat line is
 * "pid (comm) state ppid ...": comm may hold spaces or parentheses, so ppid is read after the last ")".
 */
export function parseProcLine(line: string): ProcInfo | undefined {
  const [stat = '', cgroup = '', cmd = ''] = line.split('\t');
  const m = /^(\d+) \((.*)\) \S+ (\d+) /s.exec(stat);
  if (!m) return undefined;
  const argv = cmd.split('\u0001');
  if (argv[argv.length - 1] === '') argv.pop();
  return { pid: Number(m[1]), comm: m[2]!, ppid: Number(m[3]), argv, cgroup };
}

export function parseProcDump(text: string): ProcInfo[] {
  return text
    .split('\n')
    .map(parseProcLine)
    .filter((p): p is ProcInfo => p !== undefined);
}

/** Processes in both reads with the same parent and argv: what lives longer than the gap between them. */
export function settled(a: ProcInfo[], b: ProcInfo[]): ProcInfo[] {
  const key = (p: ProcInfo) => `${p.pid} ${p.ppid} ${p.argv.join('\0')}`;
  const later = new Set(b.map(key));
  return a.filter((p) => later.has(key(p)));
}

/** The systemd unit a cgroup path names (its last *.service or *.scope), or "". */
export function unitOf(cgroup: string): string {
  return (
    cgroup
      .split('/')
      .reverse()
      .find((c) => /\.(service|scope)$/.test(c)) ?? ''
  );
}

/**
 * The Pod UID in a kubepods cgroup path: pod<uid>, dashes as underscores under the systemd driver. An
 * API Pod's UID is a UUID; a static Pod's is 32 hex digits (the kubelet's hash of its manifest).
 */
export function podOf(cgroup: string): string | undefined {
  const m =
    /kubepods.*?pod([0-9a-f]{8}[-_]?[0-9a-f]{4}[-_]?[0-9a-f]{4}[-_]?[0-9a-f]{4}[-_]?[0-9a-f]{12})(?![0-9a-f])/.exec(
      cgroup,
    );
  return m ? m[1]!.replaceAll('_', '-') : undefined;
}

/**
 * Processes that are not the node's: sshd and its sessions (the reader's own among them, which come
 * and go). Zombies and kernel threads have no argv.
 */
export function sessionPids(procs: ProcInfo[]): Set<number> {
  const out = new Set<number>();
  const sshd = procs.filter((p) => p.ppid === 1 && p.comm === 'sshd');
  const below = (pid: number) => {
    for (const c of procs)
      if (c.ppid === pid && !out.has(c.pid)) {
        out.add(c.pid);
        below(c.pid);
      }
  };
  for (const d of sshd) {
    out.add(d.pid); // the listener too: its argv counts connections in progress ("0 of 10-100 startups")
    below(d.pid);
  }
  for (const p of procs) if (p.argv.length === 0) out.add(p.pid);
  return out;
}

/** The tree from PID 1, depth first, children by pid, each process labelled with what runs it. */
export function buildTree(all: ProcInfo[]): ProcNode[] {
  const skip = sessionPids(all);
  const procs = all.filter((p) => !skip.has(p.pid));
  const children = new Map<number, ProcInfo[]>();
  for (const p of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const out: ProcNode[] = [];
  const visit = (p: ProcInfo, depth: number, parent: ProcNode | undefined) => {
    const node: ProcNode = { ...p, depth, ...label(p, parent) };
    out.push(node);
    for (const c of (children.get(p.pid) ?? []).sort((x, y) => x.pid - y.pid))
      visit(c, depth + 1, node);
  };
  const roots = procs
    .filter((p) => p.pid === 1 || !procs.some((q) => q.pid === p.ppid))
    .sort((x, y) => x.pid - y.pid);
  for (const r of roots) visit(r, 0, undefined);
  return out;
}

function label(
  p: ProcInfo,
  parent: ProcNode | undefined,
): Pick<ProcNode, 'kind' | 'under' | 'pod'> {
  if (p.pid === 1) return { kind: 'init', under: 'PID 1' };
  const name = base(p.argv, p.comm);
  if (parent?.pid === 1 && name.startsWith('containerd-shim'))
    return {
      kind: 'shim',
      under: `containerd shim (re-parented to PID 1), cgroup ${unitOf(p.cgroup) || p.cgroup}`,
    };
  if (parent && (parent.kind === 'shim' || parent.kind === 'container')) {
    const pod = podOf(p.cgroup);
    const shim =
      parent.kind === 'shim' ? parent.pid : Number(/shim (\d+)/.exec(parent.under)?.[1] ?? 0);
    return {
      kind: 'container',
      under: `${pod ? `Pod ${pod} (kubelet)` : 'a container (not a kubelet Pod)'}, shim ${shim}`,
      ...(pod ? { pod } : {}),
    };
  }
  if (parent?.pid === 1)
    return { kind: 'unit', under: `systemd unit ${unitOf(p.cgroup) || '(no unit in its cgroup)'}` };
  if (parent && base(parent.argv, parent.comm) === 'k0s')
    return { kind: 'k0s-child', under: `k0s (pid ${parent.pid})` };
  return {
    kind: 'child',
    under: `${parent ? base(parent.argv, parent.comm) : '?'} (pid ${p.ppid})`,
  };
}

export function countsOf(procs: ProcNode[]): HostProcs['counts'] {
  const n = (k: ProcKind) => procs.filter((p) => p.kind === k).length;
  return {
    units: n('unit'),
    k0sChildren: n('k0s-child'),
    shims: n('shim'),
    containers: n('container'),
    pods: new Set(procs.flatMap((p) => (p.pod ? [p.pod] : []))).size,
  };
}
