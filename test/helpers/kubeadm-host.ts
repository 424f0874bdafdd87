// What a kubeadm plane's host runs, read on the host itself and not through the collector: the
// static Pods' containers from containerd (ctr, by their CRI labels) with each task's /proc argv
// and cgroup, each manifest's command, the mirror Pods from the API, containerd's journal and
// image list, and kubeadm's own image list. Used by kubeadm-real.test.ts and compare.test.ts.
import { parse as parseYaml } from 'yaml';
import type { Session } from '../../core/transport/index.ts';
import { remote } from './lab.ts';

export const CONTROL_PLANE = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const;
type Cp = (typeof CONTROL_PLANE)[number];

export interface KubeadmHostFacts {
  containers: Record<Cp, { pid: number; argv: string[]; cgroup: string } | undefined>;
  manifests: Record<Cp, string[]>;
  mirrorPods: { name: string; phase: string; mirror: boolean; node: string }[];
  pullLines: string[];
  images: string[];
  kubeadmImages: string[];
  readyz: string;
}

export async function readKubeadmHost(s: Session): Promise<KubeadmHostFacts> {
  const containers = {} as KubeadmHostFacts['containers'];
  const manifests = {} as KubeadmHostFacts['manifests'];
  const tasks = (await remote(s, ['ctr', '-n', 'k8s.io', 'tasks', 'ls'])).split('\n').slice(1).map((l) => l.trim().split(/\s+/)).filter((f) => f[2] === 'RUNNING');
  for (const [id, pid] of tasks) {
    const labels = (JSON.parse(await remote(s, ['ctr', '-n', 'k8s.io', 'containers', 'info', id!])) as { Labels: Record<string, string> }).Labels;
    const name = labels['io.kubernetes.container.name'] as Cp;
    if (!CONTROL_PLANE.includes(name) || labels['io.kubernetes.pod.namespace'] !== 'kube-system') continue;
    const argv = (await s.exec(['cat', `/proc/${pid}/cmdline`])).stdout.split('\0').filter(Boolean);
    containers[name] = { pid: Number(pid), argv, cgroup: await remote(s, ['cat', `/proc/${pid}/cgroup`]) };
  }
  for (const c of CONTROL_PLANE) {
    const m = parseYaml((await s.readFile(`/etc/kubernetes/manifests/${c}.yaml`)).toString('utf8')) as { spec: { containers: { command: string[]; args?: string[] }[] } };
    manifests[c] = [...m.spec.containers[0]!.command, ...(m.spec.containers[0]!.args ?? [])];
  }
  const pods = JSON.parse(await remote(s, ['kubectl', '--kubeconfig', '/etc/kubernetes/admin.conf', 'get', 'pods', '-n', 'kube-system', '-o', 'json'])) as
    { items: { metadata: { name: string; annotations?: Record<string, string> }; spec: { nodeName: string }; status: { phase: string } }[] };
  return {
    containers, manifests,
    mirrorPods: pods.items.map((p) => ({ name: p.metadata.name, phase: p.status.phase, mirror: Boolean(p.metadata.annotations?.['kubernetes.io/config.mirror']), node: p.spec.nodeName })),
    pullLines: (await remote(s, ['journalctl', '-u', 'containerd', '--no-pager', '-o', 'cat'])).split('\n').filter((l) => l.includes('PullImage')),
    images: (await remote(s, ['ctr', '-n', 'k8s.io', 'images', 'ls', '-q'])).split('\n').filter((r) => r && !r.startsWith('sha256:')).sort(),
    kubeadmImages: (await remote(s, ['kubeadm', 'config', 'images', 'list', '--kubernetes-version', 'v1.36.3'])).split('\n').filter(Boolean).sort(),
    readyz: await remote(s, ['curl', '-sS', '--cacert', '/etc/kubernetes/pki/ca.crt', `https://${s.host.address}:6443/readyz`]),
  };
}
