// compare's k0s worker alone (harness/planes/k0s/worker.ts), on a fresh lab of two worker lab
// hosts: a k0s controller, and a worker joined to it with `k0s token create --role=worker`, from the
// same source-built k0s. Every assertion reads the hosts itself (ps, /proc, journalctl, k0s's own
// kubectl and ctr) and holds what the collector reported against it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse as parseYaml } from 'yaml';
import { ensureAll, ensureBinary } from '../core/components/binaries/index.ts';
import { IMAGES, KUBEADM_IMAGES } from '../core/components/images.ts';
import { labConnect, labDown, labUp } from '../harness/lab/index.ts';
import { emptyPlane, type PlaneData } from '../harness/planes/types.ts';
import { K0S_PARTS } from '../harness/planes/k0s/index.ts';
import { runWorkerPair, WORKER_POD, type K0sWorker } from '../harness/planes/k0s/worker.ts';
import { COREDNS_NONROOT } from '../harness/planes/k0s/images.ts';
import type { WorkerProcs } from '../harness/planes/k0s/worker-read.ts';
import type { Session } from '../core/transport/index.ts';
import { remote } from './helpers/lab.ts';

const NAME = 'k0swork';
const stateDir = join(tmpdir(), 'hardwire-test-labs', NAME);
const quiet = { info: () => {}, warn: () => {}, step: () => {} };
const params = {
  kubernetesVersion: 'v1.36.3',
  clusterName: 'k0swork',
  nodeName: 'node1',
  advertiseAddress: '',
  serviceCIDR: '10.96.0.0/12',
  podCIDR: '10.244.0.0/16',
  dnsDomain: 'cluster.local',
  extraSANs: [],
  firstServiceIp: '10.96.0.1',
};
let plane: PlaneData;
let worker: K0sWorker;
let procs: WorkerProcs;
let c: Session;
let w: Session;

beforeAll(async () => {
  await labDown({ name: NAME, stateDir }).catch(() => undefined);
  rmSync(stateDir, { recursive: true, force: true });
  mkdirSync(stateDir, { recursive: true });
  await labUp({ name: NAME, stateDir, hosts: 2, workers: true });
  c = await labConnect('node1', { name: NAME, stateDir });
  w = await labConnect('node2', { name: NAME, stateDir });
  const k0s = await ensureBinary('k0s', {
    kubernetesVersion: params.kubernetesVersion,
    log: quiet,
  });
  const parts = await ensureAll(K0S_PARTS, {
    kubernetesVersion: params.kubernetesVersion,
    log: quiet,
  });
  plane = emptyPlane('k0s', '', true);
  try {
    ({ worker, procs } = await runWorkerPair(
      plane,
      k0s,
      parts,
      { controller: c, worker: w },
      params,
      quiet,
    ));
  } finally {
    console.log(
      plane.steps.map((s) => `${s.ok ? 'ok' : 'FAILED'} ${s.step} ${s.ms} ms`).join('\n'),
    );
  }
});

afterAll(async () => {
  await c?.close();
  await w?.close();
  await labDown({ name: NAME, stateDir }).catch(() => undefined);
});

const k0sKubectl = (...a: string[]) => remote(c, ['k0s', 'kubectl', ...a]);

/** `ps` on the worker: pid -> [ppid, args]. */
async function psTable(): Promise<Map<number, { ppid: number; args: string }>> {
  const out = await remote(w, ['ps', '-eww', '-o', 'pid=,ppid=,args=']);
  return new Map(
    out
      .split('\n')
      .map((l) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l)!)
      .map((m) => [Number(m[1]), { ppid: Number(m[2]), args: m[3]! }]),
  );
}

/** What ps shows below the k0sworker unit's main PID and below each containerd shim, as "pid ppid args". */
function psTree(ps: Map<number, { ppid: number; args: string }>, mainPid: number): string[] {
  const roots = [
    mainPid,
    ...[...ps]
      .filter(([, p]) => p.args.split(' ')[0]!.endsWith('/containerd-shim-runc-v2'))
      .map(([pid]) => pid),
  ];
  const out = new Set<string>();
  const visit = (pid: number) => {
    const p = ps.get(pid)!;
    out.add(`${pid} ${p.ppid} ${p.args}`);
    for (const [child, q] of ps) if (q.ppid === pid) visit(child);
  };
  for (const r of roots) visit(r);
  return [...out].sort();
}

describe('k0s with a worker', () => {
  it("the worker's Node is Ready and the Pod runs on it, as k0s's own kubectl on the controller says", async () => {
    expect(
      await k0sKubectl(
        'get',
        'node',
        worker.node,
        '-o',
        'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
      ),
    ).toBe('True');
    expect(
      await k0sKubectl(
        'get',
        'pod',
        WORKER_POD,
        '-o',
        'jsonpath={.status.phase} {.spec.nodeName} {.status.podIP}',
      ),
    ).toBe(`Running ${worker.node} ${worker.pod.ip}`);
    expect(worker.node).toBe(await remote(w, ['hostname']));
    // The Pod's process is on the worker host, in the Pod's sandbox.
    expect((await psTable()).size).toBeGreaterThan(0);
    expect(await remote(w, ['pgrep', '-fx', 'sleep 3600'])).toMatch(/^\d+$/);
    // k0s's controllers are not nodes: the worker is the only one.
    expect(await k0sKubectl('get', 'nodes', '-o', 'name')).toBe(`node/${worker.node}`);
    console.log(
      `k0s worker: Node Ready ${(worker.readyMs / 1000).toFixed(1)} s after systemctl start, Pod Running after ${(worker.podMs / 1000).toFixed(1)} s`,
    );
  });

  it('ps on the worker host equals the reported process tree', async () => {
    const mainPid = Number(
      await remote(w, ['systemctl', 'show', '-p', 'MainPID', '--value', 'k0sworker']),
    );
    expect(worker.tree).toMatchObject({ unit: 'k0sworker', mainPid });
    const reported = worker.tree.procs.map((p) => `${p.pid} ${p.ppid} ${p.argv.join(' ')}`).sort();
    // A process that lives a few milliseconds (kube-proxy's nft) can fall between the two reads: read ps again before failing.
    let seen: string[] = [];
    for (let i = 0; i < 3; i++) {
      seen = psTree(await psTable(), mainPid);
      if (JSON.stringify(seen) === JSON.stringify(reported)) break;
      await sleep(1000);
    }
    expect(reported).toEqual(seen);
    const names = (ppid: number) =>
      worker.tree.procs
        .filter((p) => p.ppid === ppid)
        .map((p) => p.argv[0]!.split('/').pop())
        .sort();
    expect(names(mainPid)).toEqual(['containerd', 'kubelet']);
    const bins = worker.tree.procs.map((p) => p.argv[0]!);
    for (const b of ['/usr/local/bin/kube-proxy', '/coredns', 'sleep', '/pause'])
      expect(bins, b).toContain(b);
  });

  it('nothing was pulled: containerd logged no PullImage, and k0s imported every image from /var/lib/k0s/images', async () => {
    const journal = await remote(w, ['journalctl', '-u', 'k0sworker', '--no-pager', '-o', 'cat']);
    expect(journal.split('\n').filter((l) => l.includes('PullImage'))).toEqual([]);
    expect(worker.pulls).toEqual([]);
    const refs = [
      KUBEADM_IMAGES.pause.ref,
      KUBEADM_IMAGES['kube-proxy'].ref,
      COREDNS_NONROOT.ref,
      IMAGES.busybox.ref,
    ];
    const images = (await remote(w, ['k0s', 'ctr', '-n', 'k8s.io', 'images', 'ls', '-q'])).split(
      '\n',
    );
    for (const r of refs) expect(images, r).toContain(r);
    expect(await remote(w, ['ls', '/var/lib/k0s/images'])).toBe(
      ['busybox.tar', 'coredns.tar', 'kube-proxy.tar', 'pause.tar'].join('\n'),
    );
    expect(worker.addons.map((a) => a.image).sort()).toEqual([
      COREDNS_NONROOT.ref,
      KUBEADM_IMAGES['kube-proxy'].ref,
    ]);
  });

  it('the kubelet, kube-proxy and CoreDNS read from /proc are what runs: argv and config files, as reported', async () => {
    const argvOf = async (pid: number) =>
      (await w.exec(['cat', `/proc/${pid}/cmdline`])).stdout.split('\0').filter(Boolean);
    const kubeletPid = Number(
      await remote(w, ['pgrep', '-P', String(worker.tree.mainPid), '-x', 'kubelet']),
    );
    expect(procs.kubelet.pid).toBe(kubeletPid);
    expect(procs.kubelet.argv).toEqual(await argvOf(kubeletPid));
    expect(procs.kubelet.argv).toEqual(
      expect.arrayContaining([
        `--node-ip=${w.host.address}`,
        '--root-dir=/var/lib/kubelet',
        `--hostname-override=${worker.node}`,
      ]),
    );
    const config = await remote(w, ['cat', procs.kubelet.configPath!]);
    expect(procs.kubelet.config!.trim()).toBe(config);
    // The worker profile's one field, and k0s's own defaults for the rest.
    expect(parseYaml(config)).toMatchObject({
      failCgroupV1: false,
      serverTLSBootstrap: true,
      clusterDomain: 'cluster.local',
      clusterDNS: ['10.96.0.10'],
    });
    const proxyPid = Number(await remote(w, ['pgrep', '-x', 'kube-proxy']));
    expect(procs.kubeProxy?.pid).toBe(proxyPid);
    expect(procs.kubeProxy?.argv).toEqual(await argvOf(proxyPid));
    const proxyConfig = parseYaml(
      await remote(w, ['cat', `/proc/${proxyPid}/root/var/lib/kube-proxy/config.conf`]),
    ) as { mode: string; conntrack: { maxPerCore: number } };
    expect(proxyConfig).toMatchObject({ mode: 'nftables', conntrack: { maxPerCore: 0 } });
    expect(parseYaml(procs.kubeProxy!.config!)).toEqual(proxyConfig);
    const dnsPid = Number(await remote(w, ['pgrep', '-x', 'coredns']));
    expect(procs.coredns?.argv).toEqual(await argvOf(dnsPid));
    // Non-root, as k0s's Deployment requires (runAsNonRoot).
    expect(await remote(w, ['sh', '-c', `awk '/^Uid:/ {print $2}' /proc/${dnsPid}/status`])).toBe(
      '65532',
    );
  });

  it('k0s worker runs with the pre-flight checks ignored (cgroup v1) and the profile with failCgroupV1: false', async () => {
    const unit = await remote(w, ['systemctl', 'cat', 'k0sworker']);
    expect(unit).toMatch(/ExecStart=\/usr\/local\/bin\/k0s worker .*--ignore-pre-flight-checks/);
    expect(unit).toContain('--profile=hardwire-lab');
    // Without the ignore k0s refuses this host: its own pre-flight check says so.
    const pre = await w.exec(['k0s', 'sysinfo'], { allowFail: true });
    expect(`${pre.stdout}${pre.stderr}`).toMatch(/cgroup v1 is not supported/);
    expect(await remote(w, ['cat', '/etc/k0s/containerd.d/hardwire-lab.toml'])).toMatch(
      /restrict_oom_score_adj = true/,
    );
  });
});
