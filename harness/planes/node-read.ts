// Reading a worker's kubelet and kube-proxy for compare's node rows: a running process's argv from
// /proc/<pid>/cmdline and the file its --config names, read through /proc/<pid>/root so that a
// container's file (kubeadm's kube-proxy ConfigMap, mounted) is the one the process itself sees.
import type { Session } from '../../core/transport/index.ts';
import { flagsOf } from './normalize.ts';
import type { NodeProcess } from './node-types.ts';

/** /proc/<pid>/cmdline as argv: NUL-separated, with the trailing NUL dropped (an empty argument is kept). */
export function cmdlineArgv(raw: string): string[] {
  return raw.split('\0').filter((w, i, a) => !(i === a.length - 1 && w === ''));
}

/** One process: its argv and its --config file. `where` names the host (and container) in the sources. */
export async function readNodeProcess(
  s: Pick<Session, 'exec'>,
  pid: number,
  where: string,
): Promise<NodeProcess> {
  const cl = await s.exec(['cat', `/proc/${pid}/cmdline`]);
  const argv = cmdlineArgv(cl.stdout);
  const p: NodeProcess = { pid, argv, argvSource: `/proc/${pid}/cmdline on ${where}` };
  const configPath = flagsOf(argv).get('config');
  if (configPath) {
    const file = `/proc/${pid}/root${configPath}`;
    const r = await s.exec(['cat', file], { allowFail: true });
    if (r.code === 0)
      Object.assign(p, { configPath, config: r.stdout, configSource: `${file} on ${where}` });
  }
  return p;
}
