// compare's kubeadm plane alone, on three fresh worker lab hosts: the real `kubeadm init` with every
// phase on node1, the kubelet running its static Pods from images built here; `kubeadm join` of a
// worker (node2) and of a second control-plane member (node3, `--control-plane` with uploaded
// certificates). Everything asserted is read on the hosts themselves (crictl, /proc, etcdctl,
// kubectl, journalctl: test/helpers/kubeadm-host.ts), then held against what the collector reported.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { kubeadmCollector } from '../harness/planes/kubeadm.ts';
import { IMAGES, KUBEADM_IMAGES } from '../core/components/images.ts';
import { labConnect, labDown } from '../harness/lab/index.ts';
import type { Inventory } from '../core/inventory/load.ts';
import type { PlaneData } from '../harness/planes/types.ts';
import type { Session } from '../core/transport/index.ts';
import { CONTROL_PLANE, readKubeadmHost, type KubeadmHostFacts } from './helpers/kubeadm-host.ts';
import { remote } from './helpers/lab.ts';
import { ensureAll } from '../core/components/binaries/index.ts';
import { statSync } from 'node:fs';
import { kubectl, readAddons, readTasks, type AddonFacts } from './helpers/kubeadm-addons.ts';

const NAME = 'kadmreal';
const stateDir = join(tmpdir(), 'hardwire-test-labs', NAME);
const quiet = { info: () => {}, warn: () => {}, step: () => {} };
let plane: PlaneData;
let host: KubeadmHostFacts;
let addons: AddonFacts;
let s: Session;
let w: Session;
/** node3, joined with --control-plane, and what it runs. */
let m: Session;
let member: KubeadmHostFacts;

/** The subnet the host-local IPAM of the host's CNI config hands out. */
async function cniSubnet(h: Session): Promise<string> {
  const conf = JSON.parse(
    (await h.readFile('/etc/cni/net.d/10-bridge.conflist')).toString('utf8'),
  ) as { plugins: { ipam?: { ranges: { subnet: string }[][] } }[] };
  return conf.plugins[0]!.ipam!.ranges[0]![0]!.subnet;
}

beforeAll(async () => {
  await labDown({ name: NAME, stateDir }).catch(() => undefined);
  rmSync(stateDir, { recursive: true, force: true });
  mkdirSync(stateDir, { recursive: true });
  const params = {
    kubernetesVersion: 'v1.36.3',
    clusterName: 'kadmreal',
    nodeName: 'node1',
    advertiseAddress: '',
    serviceCIDR: '10.96.0.0/12',
    podCIDR: '10.244.0.0/16',
    dnsDomain: 'cluster.local',
    extraSANs: [],
    firstServiceIp: '10.96.0.1',
  };
  // The kubeadm collector reads only the cluster parameters; the inventory is compare's hardwire plane's.
  plane = await kubeadmCollector({ lab: NAME, keep: true, workers: 1, controlPlanes: 1 }).collect({
    inv: {} as Inventory,
    params,
    stateDir,
    log: quiet,
    cis: false,
  });
  s = await labConnect('node1', { name: NAME, stateDir });
  host = await readKubeadmHost(s);
  addons = await readAddons(s);
  w = await labConnect('node2', { name: NAME, stateDir });
  m = await labConnect('node3', { name: NAME, stateDir });
  // The collector waits for node3 Ready; its mirror Pods may trail that by a few seconds. Up to 2 min,
  // then the assertions below say what is missing.
  for (
    let t = Date.now();
    Date.now() - t < 120_000;
    await new Promise((r) => setTimeout(r, 3000))
  ) {
    const running = (
      await kubectl(
        s,
        'get',
        'pods',
        '-n',
        'kube-system',
        '--field-selector',
        'spec.nodeName=node3,status.phase=Running',
        '-o',
        'name',
      )
    ).split('\n');
    if (CONTROL_PLANE.every((c) => running.includes(`pod/${c}-node3`))) break;
  }
  member = await readKubeadmHost(m);
  // etcdctl as hardwire builds it, not the one in kubeadm's etcd image: the member list is read beside etcd, not through it.
  const [etcdctl] = await ensureAll(['etcdctl'], { kubernetesVersion: 'v1.36.3', source: 'build' });
  await s.writeFilesAtomic([
    {
      path: '/root/etcdctl',
      mode: 0o755,
      data: { file: etcdctl!.path, size: statSync(etcdctl!.path).size },
    },
  ]);
});

afterAll(async () => {
  await s?.close();
  await w?.close();
  await m?.close();
  await labDown({ name: NAME, stateDir }).catch(() => undefined);
});

describe('kubeadm plane: the real kubeadm init, run by a kubelet', () => {
  it('kubeadm init ran every phase and left a control-plane Node, its ConfigMaps and both addons', async () => {
    expect(plane.kubeadm!.init.phases.map((p) => p.phase)).toEqual(
      expect.arrayContaining([
        'preflight',
        'certs',
        'kubeconfig',
        'etcd',
        'control-plane',
        'kubelet-start',
        'wait-control-plane',
        'upload-config',
        'mark-control-plane',
        'bootstrap-token',
        'kubelet-finalize',
        'addons',
      ]),
    );
    const kubectl = (...a: string[]) =>
      remote(s, ['kubectl', '--kubeconfig', '/etc/kubernetes/admin.conf', ...a]);
    expect(await kubectl('get', 'node', 'node1', '-o', 'jsonpath={.metadata.labels}')).toContain(
      'node-role.kubernetes.io/control-plane',
    );
    expect(
      await kubectl(
        'get',
        'cm',
        '-n',
        'kube-system',
        'kubeadm-config',
        'kubelet-config',
        '-o',
        'name',
      ),
    ).toBe('configmap/kubeadm-config\nconfigmap/kubelet-config');
    expect(
      await kubectl('get', 'deploy/coredns', 'ds/kube-proxy', '-n', 'kube-system', '-o', 'name'),
    ).toBe('deployment.apps/coredns\ndaemonset.apps/kube-proxy');
    expect(host.readyz).toBe('ok');
  });

  it("nothing was pulled: kubeadm's own image list is the images table, all imported, and containerd logged no PullImage", () => {
    expect(
      Object.values(KUBEADM_IMAGES)
        .map((i) => i.ref)
        .sort(),
    ).toEqual(host.kubeadmImages);
    // kubeadm's images and the busybox its first Pod runs.
    expect(host.images).toEqual([...host.kubeadmImages, IMAGES.busybox.ref].sort());
    expect(host.pullLines).toEqual([]);
    expect(plane.kubeadm!.pulls).toEqual([]);
    // The joined control-plane member has the same images, and pulled none either.
    expect(member.images).toEqual([...member.kubeadmImages, IMAGES.busybox.ref].sort());
    expect(member.pullLines).toEqual([]);
  });

  it('the four mirror Pods are Running on node1', () => {
    for (const c of CONTROL_PLANE)
      expect(
        host.mirrorPods.find((p) => p.name === `${c}-node1`),
        c,
      ).toMatchObject({ phase: 'Running', mirror: true, node: 'node1' });
    // As the collector read them, before node3 joined.
    expect(
      plane
        .kubeadm!.mirrorPods.filter((p) => p.mirror)
        .map((p) => p.name)
        .sort(),
    ).toEqual(CONTROL_PLANE.map((c) => `${c}-node1`));
  });

  it("crictl ps on each control-plane host lists the four static Pods' containers, made by the kubelet for its manifests", async () => {
    for (const [node, session, facts] of [
      ['node1', s, host],
      ['node3', m, member],
    ] as const) {
      // crictl talks to containerd's socket, named in its config file, not found by trying defaults.
      expect(await remote(session, ['grep', '^runtime-endpoint:', '/etc/crictl.yaml']), node).toBe(
        'runtime-endpoint: unix:///run/containerd/containerd.sock',
      );
      for (const c of CONTROL_PLANE) {
        const got = facts.containers[c];
        expect(got, `${node} ${c}: crictl ps lists no running container`).toMatchObject({
          pod: `${c}-${node}`,
          namespace: 'kube-system',
        });
        // A static Pod's UID is the hash of its manifest (pkg/kubelet/config/common.go:72, 91), the one its
        // mirror Pod carries (pkg/kubelet/pod/mirror_client.go:81); its sandbox's annotations are the Pod's, where
        // the kubelet recorded the source it read the Pod from (pkg/kubelet/config/config.go:203): its manifest directory.
        const mirror = facts.mirrorPods.find((p) => p.name === `${c}-${node}`);
        expect(mirror, `${node} ${c}`).toMatchObject({ phase: 'Running', mirror: true, node });
        expect(got!.podUid, `${node} ${c}`).toBe(mirror!.mirrorHash);
        expect(facts.sandboxes[got!.sandbox]?.['kubernetes.io/config.source'], `${node} ${c}`).toBe(
          'file',
        );
      }
    }
  });

  it("each static Pod runs in a kubelet-made container whose /proc argv is its manifest's command, as reported", () => {
    for (const [node, facts] of [
      ['node1', host],
      ['node3', member],
    ] as const) {
      for (const c of CONTROL_PLANE) {
        const got = facts.containers[c];
        expect(got, `${node} ${c}: no running container`).toBeDefined();
        expect(got!.argv, `${node} ${c}`).toEqual(facts.manifests[c]);
        expect(got!.cgroup, `${node} ${c}`).toMatch(
          /:memory:\/kubepods\/(burstable|besteffort)\/pod/,
        );
      }
    }
    for (const c of CONTROL_PLANE) {
      const got = host.containers[c]!;
      expect(plane.live![c], c).toEqual({ pid: got.pid, argv: got.argv, sameAsManifest: true });
      expect(plane.commands[c]!.argv, c).toEqual(host.manifests[c]);
    }
  });

  it("the kubelet runs from kubeadm's drop-in with the KubeletConfiguration this machine needs", async () => {
    const pid = await remote(s, ['systemctl', 'show', '-p', 'MainPID', '--value', 'kubelet']);
    const argv = (await s.exec(['cat', `/proc/${pid}/cmdline`])).stdout.split('\0').filter(Boolean);
    expect(plane.kubeadm!.kubelet.argv).toEqual(argv);
    expect(argv).toEqual(
      expect.arrayContaining([
        '/usr/bin/kubelet',
        '--config=/var/lib/kubelet/config.yaml',
        '--kubeconfig=/etc/kubernetes/kubelet.conf',
        `--node-ip=${s.host.address}`,
      ]),
    );
    const config = parseYaml(
      (await s.readFile('/var/lib/kubelet/config.yaml')).toString('utf8'),
    ) as Record<string, unknown>;
    expect(config).toMatchObject({
      failCgroupV1: false,
      cgroupDriver: 'cgroupfs',
      failSwapOn: false,
    });
    expect(await remote(s, ['systemctl', 'show', '-p', 'DropInPaths', '--value', 'kubelet'])).toBe(
      '/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf',
    );
    // kubelet.conf names the rotated client pair after kubelet-finalize; the cert matrix still has it.
    expect(await remote(s, ['grep', 'client-certificate:', '/etc/kubernetes/kubelet.conf'])).toBe(
      'client-certificate: /var/lib/kubelet/pki/kubelet-client-current.pem',
    );
    expect(plane.certs.find((c) => c.role === 'kubeconfig/kubelet')?.facts).toMatchObject({
      cn: 'system:node:node1',
      o: ['system:nodes'],
    });
  });

  it("kube-proxy runs from kubeadm's DaemonSet with conntrack.maxPerCore: 0 in nftables mode, and wrote the Services' rules", () => {
    expect(addons.kubeProxyConfig).toMatchObject({
      mode: 'nftables',
      conntrack: { maxPerCore: 0 },
    });
    // One per node: node2 and node3 joined before these were read.
    expect(addons.kubeProxy.map((p) => p.node).sort()).toEqual(['node1', 'node2', 'node3']);
    for (const p of addons.kubeProxy)
      expect(p, p.node).toMatchObject({
        phase: 'Running',
        ready: true,
        restarts: 0,
        image: KUBEADM_IMAGES['kube-proxy'].ref,
      });
    const task = addons.tasks.filter((t) => t.container === 'kube-proxy');
    expect(task).toHaveLength(1);
    expect(task[0]!.argv).toEqual([
      '/usr/local/bin/kube-proxy',
      '--config=/var/lib/kube-proxy/config.conf',
      '--hostname-override=node1',
    ]);
    // The ruleset kube-proxy wrote through the nft in its image, read with the host's own nft.
    expect(addons.nftTable).toContain(`ip daddr . meta l4proto . th dport vmap @service-ips`);
    // The host's nft prints meta l4proto as its number (6 tcp, 17 udp); each element jumps to its Service's chain.
    const re = (s: string) => s.replaceAll('.', '\\.');
    expect(addons.nftTable).toMatch(
      new RegExp(
        `${re(addons.services.kubernetes)} \\. 6 \\. 443 : goto service-\\w+-default/kubernetes/tcp/https`,
      ),
    );
    expect(addons.nftTable).toMatch(
      new RegExp(
        `${re(addons.services.dns)} \\. 17 \\. 53 : goto service-\\w+-kube-system/kube-dns/udp/dns`,
      ),
    );
  });

  it("CoreDNS is Ready: both replicas of kubeadm's Deployment, each a running container", () => {
    expect(addons.coredns).toHaveLength(2);
    for (const p of addons.coredns)
      expect(p, p.name).toMatchObject({
        node: 'node1',
        phase: 'Running',
        ready: true,
        image: KUBEADM_IMAGES.coredns.ref,
      });
    expect(addons.tasks.filter((t) => t.container === 'coredns').map((t) => t.argv[0])).toEqual([
      '/coredns',
      '/coredns',
    ]);
  });

  it('a busybox Pod from the image built here runs on node1 and resolves kubernetes.default through CoreDNS', async () => {
    expect(addons.busybox).toMatchObject({
      node: 'node1',
      phase: 'Running',
      ready: true,
      image: IMAGES.busybox.ref,
    });
    expect(addons.tasks.filter((t) => t.pod === 'busybox')).toEqual([
      { container: 'busybox', pod: 'busybox', argv: ['sleep', '3600'] },
    ]);
    expect(await kubectl(s, 'exec', 'busybox', '--', 'cat', '/etc/resolv.conf')).toContain(
      `nameserver ${addons.services.dns}`,
    );
    const ns = await kubectl(
      s,
      'exec',
      'busybox',
      '--',
      'nslookup',
      'kubernetes.default.svc.cluster.local',
    );
    expect(ns).toMatch(new RegExp(`Server:\\s*${addons.services.dns.replaceAll('.', '\\.')}\\b`));
    expect(
      /Name:\s*kubernetes\.default\.svc\.cluster\.local\s*\nAddress:\s*(\S+)/.exec(ns)?.[1],
    ).toBe(addons.services.kubernetes);
    expect(plane.kubeadm!.firstPod).toMatchObject({
      node: 'node1',
      ip: addons.busybox!.ip,
      dns: { address: addons.services.kubernetes },
    });
  });

  it('kubeadm join left node2 a Ready worker, its kubelet bootstrapped by the join, and the scheduler put a Pod on it', async () => {
    const node = JSON.parse(await kubectl(s, 'get', 'node', 'node2', '-o', 'json')) as {
      metadata: { labels: Record<string, string> };
      spec: { podCIDR: string };
      status: { conditions: { type: string; status: string }[] };
    };
    expect(node.status.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(Object.keys(node.metadata.labels)).not.toContain(
      'node-role.kubernetes.io/control-plane',
    );
    // The range kube-controller-manager gave it is the one its CNI config hands out.
    expect(node.spec.podCIDR).toBe(await cniSubnet(w));
    // On node2 itself: the kubelet under kubeadm's drop-in, with the kubeconfig the TLS bootstrap wrote, toward node1's apiserver.
    const pid = await remote(w, ['systemctl', 'show', '-p', 'MainPID', '--value', 'kubelet']);
    const argv = (await w.exec(['cat', `/proc/${pid}/cmdline`])).stdout.split('\0').filter(Boolean);
    expect(argv).toEqual(
      expect.arrayContaining([
        '--kubeconfig=/etc/kubernetes/kubelet.conf',
        `--node-ip=${w.host.address}`,
      ]),
    );
    expect(await remote(w, ['grep', 'server:', '/etc/kubernetes/kubelet.conf'])).toBe(
      `server: https://${s.host.address}:6443`,
    );
    expect(await remote(w, ['ls', '/etc/kubernetes/manifests'])).toBe('');
    // The Pod: no toleration, no nodeName; the scheduler bound it to node2, whose containerd runs it.
    const pod = JSON.parse(await kubectl(s, 'get', 'pod', 'busybox-worker', '-o', 'json')) as {
      spec: { nodeName: string; tolerations?: { key?: string }[] };
      status: { phase: string };
    };
    expect(pod).toMatchObject({ spec: { nodeName: 'node2' }, status: { phase: 'Running' } });
    expect(pod.spec.tolerations?.map((t) => t.key)).not.toContain(
      'node-role.kubernetes.io/control-plane',
    );
    const onNode2 = await readTasks(w);
    expect(onNode2.filter((t) => t.pod === 'busybox-worker')).toEqual([
      { container: 'busybox', pod: 'busybox-worker', argv: ['sleep', '3600'] },
    ]);
    expect(onNode2.filter((t) => t.container === 'kube-proxy').map((t) => t.argv.at(-1))).toEqual([
      '--hostname-override=node2',
    ]);
    expect(
      (await remote(w, ['journalctl', '-u', 'containerd', '--no-pager', '-o', 'cat']))
        .split('\n')
        .filter((l) => l.includes('PullImage')),
    ).toEqual([]);
    expect(plane.kubeadm!.worker).toMatchObject({
      node: 'node2',
      pod: { name: 'busybox-worker', node: 'node2' },
    });
  });
  it("node2 was prepared while node1 ran kubeadm init, and joined before the first Pod on node1 (the hosts' file times and the API)", async () => {
    // One clock: the lab hosts are containers on this machine's kernel. node2's preparation began
    // sending files before init's last phase, addon, made the kube-proxy DaemonSet on node1; init's
    // first phase, certs, wrote node1's CA. The earliest mtime of node2's binaries is when the push
    // began (each tar entry carries the time it was packed; tar -x keeps it), not when it finished
    // (ctime, the rename at its end), so the check measures overlap, not upload speed.
    const bins = [
      '/usr/bin/kubelet',
      '/usr/bin/kubeadm',
      '/usr/bin/kubectl',
      '/usr/local/bin/containerd',
      '/usr/local/bin/runc',
      '/usr/local/bin/crictl',
      '/opt/cni/bin/bridge',
    ];
    const staged = Math.min(
      ...(await remote(w, ['stat', '-c', '%Y', ...bins])).trim().split('\n').map(Number),
    );
    const initStart = Number(await remote(s, ['stat', '-c', '%Z', '/etc/kubernetes/pki/ca.crt']));
    const created = async (...args: string[]) =>
      Date.parse(
        (
          JSON.parse(await kubectl(s, 'get', ...args, '-o', 'json')) as {
            metadata: { creationTimestamp: string };
          }
        ).metadata.creationTimestamp,
      ) / 1000;
    const initEnd = await created('ds', '-n', 'kube-system', 'kube-proxy');
    console.log(
      `kubeadm worker prepared beside init: node2's push began ${staged - initStart} s after init's certs, ${initEnd - staged} s before its addon phase`,
    );
    expect(staged, 'node2 staged before kubeadm init ended').toBeLessThan(initEnd);
    // The join came right after init: node2's Node exists before compare's first busybox Pod on node1 was made.
    expect(await created('node', 'node2')).toBeLessThanOrEqual(await created('pod', 'busybox'));
  });

  it('kubeadm join --control-plane left node3 a second control-plane member: etcd has two voting members, and node3 is a Ready control-plane Node', async () => {
    // etcdctl on node1, with the etcd certificates kubeadm wrote there.
    const etcd = [
      '/root/etcdctl',
      '--endpoints=https://127.0.0.1:2379',
      '--cacert=/etc/kubernetes/pki/etcd/ca.crt',
      '--cert=/etc/kubernetes/pki/etcd/healthcheck-client.crt',
      '--key=/etc/kubernetes/pki/etcd/healthcheck-client.key',
    ];
    const list = JSON.parse((await s.exec([...etcd, 'member', 'list', '-w', 'json'])).stdout) as {
      members: { name: string; peerURLs: string[]; clientURLs: string[]; isLearner?: boolean }[];
    };
    expect(list.members.map((x) => x.name).sort()).toEqual(['node1', 'node3']);
    for (const [x, addr] of [
      ['node1', s.host.address],
      ['node3', m.host.address],
    ] as const) {
      expect(
        list.members.find((y) => y.name === x),
        x,
      ).toMatchObject({ peerURLs: [`https://${addr}:2380`], clientURLs: [`https://${addr}:2379`] });
    }
    expect(list.members.filter((x) => x.isLearner)).toEqual([]);
    const node = JSON.parse(await kubectl(s, 'get', 'node', 'node3', '-o', 'json')) as {
      metadata: { labels: Record<string, string> };
      spec: { podCIDR: string; taints?: { key: string }[] };
      status: { conditions: { type: string; status: string }[] };
    };
    expect(node.status.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(Object.keys(node.metadata.labels)).toContain('node-role.kubernetes.io/control-plane');
    expect(node.spec.taints?.map((t) => t.key)).toContain('node-role.kubernetes.io/control-plane');
    // Whatever /24 it was given, its CNI config has it, and the collector reported it.
    expect(node.spec.podCIDR).toBe(await cniSubnet(m));
    expect(plane.kubeadm!.controlPlane).toMatchObject({
      node: 'node3',
      podCIDR: node.spec.podCIDR,
    });
    // node3's own apiserver serves, and its kubelet talks to it, not to the controlPlaneEndpoint init set:
    // a control-plane join writes kubelet.conf with the member's LocalAPIEndpoint (kubeadm v1.36.3,
    // cmd/kubeadm/app/cmd/phases/join/kubelet.go, "forces it to talk to the local kube-apiserver").
    expect(member.readyz).toBe('ok');
    expect(await remote(m, ['grep', 'server:', '/etc/kubernetes/kubelet.conf'])).toBe(
      `server: https://${m.host.address}:6443`,
    );
  });

  it("the certificate key is only in node3's 0600 JoinConfiguration: not in the report, nor a journal, and the upload config is gone", async () => {
    const path = '/root/hardwire-compare/kubeadm-join.yaml';
    expect(await remote(m, ['stat', '-c', '%a', path])).toBe('600');
    const key =
      (
        parseYaml((await m.readFile(path)).toString('utf8')) as {
          controlPlane?: { certificateKey?: string };
        }
      ).controlPlane?.certificateKey ?? '';
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    // Searched here, so the key is in no command line on the hosts, and a failure does not print it.
    expect(JSON.stringify(plane).includes(key), 'the report holds the key').toBe(false);
    for (const h of [s, m])
      expect(
        (await h.exec(['journalctl', '--no-pager', '-o', 'cat'])).stdout.includes(key),
        `${h.host.name}'s journal holds the key`,
      ).toBe(false);
    expect(
      (
        await s.exec(['test', '-e', '/root/hardwire-compare/kubeadm-upload-certs.yaml'], {
          allowFail: true,
        })
      ).code,
    ).toBe(1);
  });
});
