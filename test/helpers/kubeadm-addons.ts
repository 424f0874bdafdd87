// kubeadm's addons and the first Pod on a kubeadm plane's host, read on the host itself and not
// through the collector: the Pods from the API (kubectl with admin.conf), their containers from
// containerd (ctr, by CRI labels, with /proc argv), kube-proxy's config as kubeadm stored it, the
// nftables ruleset kube-proxy wrote (the host's own nft), and a name looked up inside the Pod.
import { parse as parseYaml } from 'yaml';
import type { Session } from '../../core/transport/index.ts';
import { remote } from './lab.ts';

interface PodJson { metadata: { name: string; labels?: Record<string, string> }; spec: { nodeName?: string; containers: { image: string }[] }; status: { phase: string; podIP?: string; containerStatuses?: { ready: boolean; restartCount: number }[] } }
export interface PodFacts { name: string; node: string; phase: string; ready: boolean; restarts: number; image: string; ip: string }

export interface AddonFacts {
  kubeProxy: PodFacts[];
  coredns: PodFacts[];
  busybox: PodFacts | undefined;
  /** The KubeProxyConfiguration in the kube-proxy ConfigMap kubeadm made. */
  kubeProxyConfig: Record<string, unknown>;
  /** Running containers by CRI container name: /proc argv of each task. */
  tasks: { container: string; pod: string; argv: string[] }[];
  /** `nft list table ip kube-proxy` on the host. */
  nftTable: string;
  services: { kubernetes: string; dns: string };
}

const facts = (p: PodJson): PodFacts => ({
  name: p.metadata.name, node: p.spec.nodeName ?? '', phase: p.status.phase, image: p.spec.containers[0]!.image, ip: p.status.podIP ?? '',
  ready: p.status.containerStatuses?.[0]?.ready ?? false, restarts: p.status.containerStatuses?.[0]?.restartCount ?? 0,
});

export const kubectl = (s: Session, ...a: string[]) => remote(s, ['kubectl', '--kubeconfig', '/etc/kubernetes/admin.conf', ...a]);

/** Every running container on the host but the sandboxes, by its CRI labels, with its task's /proc argv. */
export async function readTasks(s: Session): Promise<AddonFacts['tasks']> {
  const tasks: AddonFacts['tasks'] = [];
  const running = (await remote(s, ['ctr', '-n', 'k8s.io', 'tasks', 'ls'])).split('\n').slice(1).map((l) => l.trim().split(/\s+/)).filter((f) => f[2] === 'RUNNING');
  for (const [id, pid] of running) {
    const labels = (JSON.parse(await remote(s, ['ctr', '-n', 'k8s.io', 'containers', 'info', id!])) as { Labels: Record<string, string> }).Labels;
    const container = labels['io.kubernetes.container.name'];
    if (!container || container === 'POD') continue;
    tasks.push({ container, pod: labels['io.kubernetes.pod.name'] ?? '', argv: (await s.exec(['cat', `/proc/${pid}/cmdline`])).stdout.split('\0').filter(Boolean) });
  }
  return tasks;
}

export async function readAddons(s: Session): Promise<AddonFacts> {
  const pods = (JSON.parse(await kubectl(s, 'get', 'pods', '-A', '-o', 'json')) as { items: PodJson[] }).items;
  return {
    kubeProxy: pods.filter((p) => p.metadata.labels?.['k8s-app'] === 'kube-proxy').map(facts),
    coredns: pods.filter((p) => p.metadata.labels?.['k8s-app'] === 'kube-dns').map(facts),
    busybox: pods.filter((p) => p.metadata.name === 'busybox').map(facts)[0],
    kubeProxyConfig: parseYaml(await kubectl(s, 'get', 'cm', 'kube-proxy', '-n', 'kube-system', '-o', 'jsonpath={.data.config\\.conf}')) as Record<string, unknown>,
    tasks: await readTasks(s),
    nftTable: await remote(s, ['nft', 'list', 'table', 'ip', 'kube-proxy']),
    services: {
      kubernetes: await kubectl(s, 'get', 'svc', 'kubernetes', '-n', 'default', '-o', 'jsonpath={.spec.clusterIP}'),
      dns: await kubectl(s, 'get', 'svc', 'kube-dns', '-n', 'kube-system', '-o', 'jsonpath={.spec.clusterIP}'),
    },
  };
}
