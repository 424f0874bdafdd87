// kubeadm's addons and the first Pod on a kubeadm plane's host, read on the host itself and not
// through the collector: the Pods from the API (kubectl with admin.conf), their containers from
// crictl (by CRI labels, with /proc argv), kube-proxy's config as kubeadm stored it, the
// nftables ruleset kube-proxy wrote (the host's own nft), and a name looked up inside the Pod.
import { parse as parseYaml } from 'yaml';
import type { Session } from '../../core/transport/index.ts';
import { remote } from './lab.ts';
import { crictlPs } from './kubeadm-host.ts';

interface PodJson {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { nodeName?: string; containers: { image: string }[] };
  status: {
    phase: string;
    podIP?: string;
    containerStatuses?: { ready: boolean; restartCount: number }[];
  };
}
export interface PodFacts {
  name: string;
  node: string;
  phase: string;
  ready: boolean;
  restarts: number;
  image: string;
  ip: string;
}

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
  name: p.metadata.name,
  node: p.spec.nodeName ?? '',
  phase: p.status.phase,
  image: p.spec.containers[0]!.image,
  ip: p.status.podIP ?? '',
  ready: p.status.containerStatuses?.[0]?.ready ?? false,
  restarts: p.status.containerStatuses?.[0]?.restartCount ?? 0,
});

export const kubectl = (s: Session, ...a: string[]) =>
  remote(s, ['kubectl', '--kubeconfig', '/etc/kubernetes/admin.conf', ...a]);

/** Every running container `crictl ps` lists on the host (sandboxes are not containers there), with its task's /proc argv. */
export async function readTasks(s: Session): Promise<AddonFacts['tasks']> {
  return (await crictlPs(s)).map((c) => ({ container: c.name, pod: c.pod, argv: c.argv }));
}

export async function readAddons(s: Session): Promise<AddonFacts> {
  const pods = (
    JSON.parse(await kubectl(s, 'get', 'pods', '-A', '-o', 'json')) as { items: PodJson[] }
  ).items;
  return {
    kubeProxy: pods.filter((p) => p.metadata.labels?.['k8s-app'] === 'kube-proxy').map(facts),
    coredns: pods.filter((p) => p.metadata.labels?.['k8s-app'] === 'kube-dns').map(facts),
    busybox: pods.filter((p) => p.metadata.name === 'busybox').map(facts)[0],
    kubeProxyConfig: parseYaml(
      await kubectl(
        s,
        'get',
        'cm',
        'kube-proxy',
        '-n',
        'kube-system',
        '-o',
        'jsonpath={.data.config\\.conf}',
      ),
    ) as Record<string, unknown>,
    tasks: await readTasks(s),
    nftTable: await remote(s, ['nft', 'list', 'table', 'ip', 'kube-proxy']),
    services: {
      kubernetes: await kubectl(
        s,
        'get',
        'svc',
        'kubernetes',
        '-n',
        'default',
        '-o',
        'jsonpath={.spec.clusterIP}',
      ),
      dns: await kubectl(
        s,
        'get',
        'svc',
        'kube-dns',
        '-n',
        'kube-system',
        '-o',
        'jsonpath={.spec.clusterIP}',
      ),
    },
  };
}
