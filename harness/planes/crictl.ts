// crictl on a kubeadm plane host: its config file, and the running containers it lists over CRI,
// the kubelet's own view (`crictl ps`), each with its task's PID (`crictl inspect`). kubeadm's docs
// use crictl to look at a node's containers; its release tarball goes to /usr/local/bin.
import { StepError } from '../../lib/errors.ts';
import type { Session } from '../../core/transport/index.ts';
import { CONTAINERD_SOCKET } from '../../core/components/models/containerd.ts';

export const CRICTL_CONFIG_PATH = '/etc/crictl.yaml';
/** The socket kubeadm's nodeRegistration.criSocket names and crictl talks to. */
export const CRI_ENDPOINT = `unix://${CONTAINERD_SOCKET}`;

/**
 * /etc/crictl.yaml, crictl's default config (cmd/crictl/main_unix.go defaultConfigPath). Without it
 * crictl tries a list of default sockets and warns that doing so is deprecated; with an endpoint
 * set it connects to that one only, so a wrong socket is an error, not a fallback.
 */
export function crictlConfig(endpoint = CRI_ENDPOINT): string {
  return [
    "# containerd's CRI socket, the one kubeadm.yaml's nodeRegistration.criSocket names (hardwire compare)",
    `runtime-endpoint: ${endpoint}`,
    `image-endpoint: ${endpoint}`,
    'timeout: 10',
    '',
  ].join('\n');
}

export interface CriContainer {
  id: string;
  pid: number;
  labels: Record<string, string>;
}

interface PsJson {
  containers: { id: string; state: string; labels?: Record<string, string> }[];
}

async function crictl(s: Session, args: string[]): Promise<string> {
  const r = await s.exec(['crictl', ...args], { allowFail: true, timeoutMs: 60_000 });
  if (r.code !== 0)
    throw new StepError(
      'crictl',
      `crictl ${args.join(' ')} exited ${r.code} (${CRICTL_CONFIG_PATH} should name ${CRI_ENDPOINT})`,
      { host: s.host.name, detail: r.stderr.trim().split('\n').slice(-5) },
    );
  return r.stdout;
}

/** Every running container `crictl ps` lists (sandboxes are not containers there), with its PID from `crictl inspect`. */
export async function criContainers(s: Session): Promise<CriContainer[]> {
  const ps = JSON.parse(await crictl(s, ['ps', '-o', 'json'])) as PsJson;
  const out: CriContainer[] = [];
  for (const c of ps.containers.filter((x) => x.state === 'CONTAINER_RUNNING')) {
    const info = JSON.parse(await crictl(s, ['inspect', '-o', 'json', c.id])) as {
      info?: { pid?: number };
    };
    out.push({ id: c.id, pid: info.info?.pid ?? 0, labels: c.labels ?? {} });
  }
  return out;
}
