// What a kubeadm plane's control-plane host runs, read on the host itself and not through the
// collector: the static Pods' containers as `crictl ps -o json` lists them (CRI labels), each
// one's PID from `crictl inspect` with its /proc argv and cgroup, the Pod sandboxes' annotations
// (`crictl pods -o json`), each manifest's command, the mirror Pods from the API, containerd's
// journal and image list, and kubeadm's own image list. Used by kubeadm-real.test.ts and compare.test.ts.
import { parse as parseYaml } from 'yaml';
import type { Session } from '../../core/transport/index.ts';
import { remote } from './lab.ts';

export const CONTROL_PLANE = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
] as const;
type Cp = (typeof CONTROL_PLANE)[number];

export interface CrictlContainer {
  id: string;
  name: string;
  pod: string;
  namespace: string;
  podUid: string;
  sandbox: string;
  pid: number;
  argv: string[];
}

export interface KubeadmHostFacts {
  containers: Record<Cp, (CrictlContainer & { cgroup: string }) | undefined>;
  /** Annotations of each Pod sandbox `crictl pods` lists, by sandbox id. */
  sandboxes: Record<string, Record<string, string>>;
  manifests: Record<Cp, string[]>;
  mirrorPods: { name: string; phase: string; mirror: boolean; mirrorHash: string; node: string }[];
  pullLines: string[];
  images: string[];
  kubeadmImages: string[];
  readyz: string;
}

/** crictl on the host, failing loudly: a crictl that cannot reach containerd is a finding, not an empty list. */
export async function crictl(s: Session, ...args: string[]): Promise<string> {
  return (await s.exec(['crictl', ...args], { timeoutMs: 60_000 })).stdout;
}

/** Every running container `crictl ps` lists, with its PID (`crictl inspect`) and that PID's /proc argv. */
export async function crictlPs(s: Session): Promise<CrictlContainer[]> {
  const ps = JSON.parse(await crictl(s, 'ps', '-o', 'json')) as {
    containers: {
      id: string;
      podSandboxId: string;
      state: string;
      labels: Record<string, string>;
    }[];
  };
  const out: CrictlContainer[] = [];
  for (const c of ps.containers.filter((x) => x.state === 'CONTAINER_RUNNING')) {
    const pid = (
      JSON.parse(await crictl(s, 'inspect', '-o', 'json', c.id)) as { info: { pid: number } }
    ).info.pid;
    const l = c.labels;
    out.push({
      id: c.id,
      sandbox: c.podSandboxId,
      pid,
      name: l['io.kubernetes.container.name'] ?? '',
      pod: l['io.kubernetes.pod.name'] ?? '',
      namespace: l['io.kubernetes.pod.namespace'] ?? '',
      podUid: l['io.kubernetes.pod.uid'] ?? '',
      argv: (await s.exec(['cat', `/proc/${pid}/cmdline`])).stdout.split('\0').filter(Boolean),
    });
  }
  return out;
}

export async function readKubeadmHost(s: Session): Promise<KubeadmHostFacts> {
  const containers = {} as KubeadmHostFacts['containers'];
  const manifests = {} as KubeadmHostFacts['manifests'];
  for (const c of await crictlPs(s)) {
    if (!(CONTROL_PLANE as readonly string[]).includes(c.name) || c.namespace !== 'kube-system')
      continue;
    containers[c.name as Cp] = { ...c, cgroup: await remote(s, ['cat', `/proc/${c.pid}/cgroup`]) };
  }
  const pods = JSON.parse(await crictl(s, 'pods', '-o', 'json')) as {
    items: { id: string; annotations?: Record<string, string> }[];
  };
  for (const c of CONTROL_PLANE) {
    const m = parseYaml(
      (await s.readFile(`/etc/kubernetes/manifests/${c}.yaml`)).toString('utf8'),
    ) as { spec: { containers: { command: string[]; args?: string[] }[] } };
    manifests[c] = [...m.spec.containers[0]!.command, ...(m.spec.containers[0]!.args ?? [])];
  }
  const mirror = JSON.parse(
    await remote(s, [
      'kubectl',
      '--kubeconfig',
      '/etc/kubernetes/admin.conf',
      'get',
      'pods',
      '-n',
      'kube-system',
      '-o',
      'json',
    ]),
  ) as {
    items: {
      metadata: { name: string; annotations?: Record<string, string> };
      spec: { nodeName: string };
      status: { phase: string };
    }[];
  };
  return {
    containers,
    manifests,
    sandboxes: Object.fromEntries(pods.items.map((p) => [p.id, p.annotations ?? {}])),
    mirrorPods: mirror.items.map((p) => {
      const hash = p.metadata.annotations?.['kubernetes.io/config.mirror'] ?? '';
      return {
        name: p.metadata.name,
        phase: p.status.phase,
        mirror: hash !== '',
        mirrorHash: hash,
        node: p.spec.nodeName,
      };
    }),
    pullLines: (await remote(s, ['journalctl', '-u', 'containerd', '--no-pager', '-o', 'cat']))
      .split('\n')
      .filter((l) => l.includes('PullImage')),
    images: (await remote(s, ['ctr', '-n', 'k8s.io', 'images', 'ls', '-q']))
      .split('\n')
      .filter((r) => r && !r.startsWith('sha256:'))
      .sort(),
    kubeadmImages: (
      await remote(s, ['kubeadm', 'config', 'images', 'list', '--kubernetes-version', 'v1.36.3'])
    )
      .split('\n')
      .filter(Boolean)
      .sort(),
    readyz: await remote(s, [
      'curl',
      '-sS',
      '--cacert',
      '/etc/kubernetes/pki/ca.crt',
      `https://${s.host.address}:6443/readyz`,
    ]),
  };
}
