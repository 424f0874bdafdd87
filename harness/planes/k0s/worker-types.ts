// The k0s worker's facts as the report keeps them (types.ts K0sModel.worker); no imports, so the
// report's types can name them without a loop.

export interface TreeProc {
  pid: number;
  ppid: number;
  argv: string[];
}

export interface WorkerTree {
  unit: string;
  mainPid: number;
  /** The unit's main process and everything below it, then each shim and everything below it, by ppid. */
  procs: TreeProc[];
}

/** What the report keeps of the worker (types.ts K0sModel.worker). */
export interface K0sWorker {
  controller: { host: string; address: string; disabled: string[] };
  node: string;
  address: string;
  /** The `k0s install worker` argv, its token file's path instead of the token. */
  install: string[];
  /** From `systemctl start k0sworker` to the Node Ready, and to the Pod Running. */
  readyMs: number;
  podMs: number;
  podRange: string;
  pod: { name: string; node: string; ip: string; image: string };
  addons: { name: string; phase: string; ready: boolean; image: string }[];
  tree: WorkerTree;
  images: string[];
  /** containerd's log lines (in k0sworker's journal) that mention PullImage: none when nothing was pulled. */
  pulls: string[];
}
