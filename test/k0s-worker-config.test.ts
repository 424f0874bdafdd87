// The k0s worker's pure parts: the controller's cluster config, the process-tree walk, the report rows.
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { k0sConfig, k0sWorkerClusterConfig, WORKER_PROFILE } from '../harness/planes/k0s/config.ts';
import { treeFrom } from '../harness/planes/k0s/worker-read.ts';
import { firstNodeRange } from '../harness/planes/k0s/worker.ts';
import { workerLabName } from '../harness/planes/k0s/worker-lab.ts';
import { treeRows, workerFacts } from '../harness/compare/k0s-worker-section.ts';
import { CONTAINERD_OOM_DROPIN, IPTABLES_DEBS } from '../harness/planes/k0s/worker-host.ts';

const params = {
  kubernetesVersion: 'v1.36.3',
  clusterName: 'c',
  nodeName: 'node1',
  advertiseAddress: '',
  serviceCIDR: '10.96.0.0/12',
  podCIDR: '10.244.0.0/16',
  dnsDomain: 'cluster.local',
  extraSANs: [],
  firstServiceIp: '10.96.0.1',
};
const refs = {
  pause: 'registry.k8s.io/pause:3.10.2',
  kubeProxy: 'registry.k8s.io/kube-proxy:v1.36.3',
  coredns: 'hardwire.local/coredns-nonroot:v1.14.2',
};

describe('k0s worker config', () => {
  it("the worker's controller: the plane's config plus a custom network, the images built here and the cgroup v1 profile", () => {
    type Doc = { spec: Record<string, Record<string, unknown>> };
    const base = parseYaml(k0sConfig(params, '10.0.0.1')) as Doc;
    const doc = parseYaml(k0sWorkerClusterConfig(params, '10.0.0.1', refs)) as Doc;
    expect(doc.spec.api).toEqual(base.spec.api);
    expect(doc.spec.storage).toEqual(base.spec.storage);
    expect(doc.spec.network).toEqual({
      ...base.spec.network,
      provider: 'custom',
      kubeProxy: { mode: 'nftables' },
    });
    expect(doc.spec.images).toEqual({
      kubeproxy: { image: 'registry.k8s.io/kube-proxy', version: 'v1.36.3' },
      coredns: { image: 'hardwire.local/coredns-nonroot', version: 'v1.14.2' },
      pause: { image: 'registry.k8s.io/pause', version: '3.10.2' },
    });
    expect(doc.spec.workerProfiles).toEqual([
      { name: WORKER_PROFILE, values: { failCgroupV1: false } },
    ]);
  });

  it("the containerd drop-in and the .debs k0s's iptables component needs", () => {
    expect(CONTAINERD_OOM_DROPIN).toMatch(/^version = 3$/m);
    expect(CONTAINERD_OOM_DROPIN).toMatch(
      /^\[plugins\."io\.containerd\.cri\.v1\.runtime"\]\n\s+restrict_oom_score_adj = true$/m,
    );
    expect(IPTABLES_DEBS[0]).toBe('iptables');
  });

  it("the first node's Pod range and the worker lab's name", () => {
    expect(firstNodeRange('10.244.0.0/16')).toBe('10.244.0.0/24');
    expect(firstNodeRange('10.200.8.0/21')).toBe('10.200.8.0/24');
    expect(workerLabName('compare-k0s')).toBe('compare-k0s-w');
    expect(workerLabName('x'.repeat(40))).toHaveLength(40);
  });
});

describe('k0s worker process tree', () => {
  // pid, ppid: 100 k0s worker (main) -> 101 containerd, 102 kubelet -> 103 (gone); 200 shim -> 201 pause, 202 kube-proxy; 300 unrelated.
  const table: [number, number][] = [
    [1, 0],
    [100, 1],
    [101, 100],
    [102, 100],
    [103, 102],
    [200, 1],
    [201, 200],
    [202, 200],
    [300, 1],
  ];
  const argv = new Map<number, string[]>([
    [100, ['/usr/local/bin/k0s', 'worker']],
    [101, ['containerd']],
    [102, ['kubelet', '--v=1']],
    [200, ['containerd-shim-runc-v2', '-id', 'x']],
    [201, ['/pause']],
    [202, ['/usr/local/bin/kube-proxy', '--config=/c']],
    [300, ['sshd']],
  ]);

  it("walks each root's descendants once, parents first, skipping processes with no command line", () => {
    const t = treeFrom(table, [100, 200, 100], argv);
    expect(t.map((p) => [p.pid, p.ppid])).toEqual([
      [100, 1],
      [101, 100],
      [102, 100],
      [200, 1],
      [201, 200],
      [202, 200],
    ]);
    expect(t.find((p) => p.pid === 102)?.argv).toEqual(['kubelet', '--v=1']);
  });

  it('renders as rows indented by depth, and the worker facts say nothing was pulled', () => {
    const tree = { unit: 'k0sworker', mainPid: 100, procs: treeFrom(table, [100, 200], argv) };
    expect(treeRows({ tree } as never).map((r) => r[2])).toEqual([
      '/usr/local/bin/k0s worker',
      '  containerd',
      '  kubelet --v=1',
      'containerd-shim-runc-v2 -id x',
      '  /pause',
      '  /usr/local/bin/kube-proxy --config=/c',
    ]);
    const w = {
      controller: { host: 'node1', address: 'a1', disabled: ['metrics-server'] },
      node: 'node2',
      address: 'a2',
      install: ['k0s', 'install', 'worker'],
      readyMs: 18_000,
      podMs: 26_000,
      podRange: '10.244.0.0/24',
      pod: { name: 'p', node: 'node2', ip: '10.244.0.5', image: 'i' },
      addons: [],
      tree,
      images: [],
      pulls: [],
    };
    const facts = Object.fromEntries(workerFacts(w));
    expect(facts['pulled from a registry']).toBe("nothing (no PullImage in containerd's log)");
    expect(facts['Node Ready']).toBe('18.0 s after systemctl start k0sworker');
  });
});
