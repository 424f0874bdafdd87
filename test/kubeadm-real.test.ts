// compare's kubeadm plane alone, on one fresh worker lab host: the real `kubeadm init` with every
// phase, the kubelet running its static Pods from images built here. Everything asserted is read
// on the host itself (test/helpers/kubeadm-host.ts), then held against what the collector reported.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { kubeadmCollector } from '../harness/compare/planes/kubeadm.ts';
import { KUBEADM_IMAGES } from '../core/components/images.ts';
import { labConnect, labDown } from '../harness/lab/index.ts';
import type { Inventory } from '../core/inventory/load.ts';
import type { PlaneData } from '../harness/compare/types.ts';
import type { Session } from '../core/transport/index.ts';
import { CONTROL_PLANE, readKubeadmHost, type KubeadmHostFacts } from './helpers/kubeadm-host.ts';
import { remote } from './helpers/lab.ts';

const NAME = 'kadmreal';
const stateDir = join(tmpdir(), 'hardwire-test-labs', NAME);
const quiet = { info: () => {}, warn: () => {}, step: () => {} };
let plane: PlaneData;
let host: KubeadmHostFacts;
let s: Session;

beforeAll(async () => {
  await labDown({ name: NAME, stateDir }).catch(() => undefined);
  rmSync(stateDir, { recursive: true, force: true });
  mkdirSync(stateDir, { recursive: true });
  const params = {
    kubernetesVersion: 'v1.36.3', clusterName: 'kadmreal', nodeName: 'node1', advertiseAddress: '', serviceCIDR: '10.96.0.0/12',
    podCIDR: '10.244.0.0/16', dnsDomain: 'cluster.local', extraSANs: [], firstServiceIp: '10.96.0.1',
  };
  // The kubeadm collector reads only the cluster parameters; the inventory is compare's hardwire plane's.
  plane = await kubeadmCollector({ lab: NAME, keep: true }).collect({ inv: {} as Inventory, params, stateDir, log: quiet, cis: false });
  s = await labConnect('node1', { name: NAME, stateDir });
  host = await readKubeadmHost(s);
});

afterAll(async () => {
  await s?.close();
  await labDown({ name: NAME, stateDir }).catch(() => undefined);
});

describe('kubeadm plane: the real kubeadm init, run by a kubelet', () => {
  it('kubeadm init ran every phase and left a control-plane Node, its ConfigMaps and both addons', async () => {
    expect(plane.kubeadm!.init.phases.map((p) => p.phase)).toEqual(expect.arrayContaining([
      'preflight', 'certs', 'kubeconfig', 'etcd', 'control-plane', 'kubelet-start', 'wait-control-plane', 'upload-config', 'mark-control-plane', 'bootstrap-token', 'kubelet-finalize', 'addons',
    ]));
    const kubectl = (...a: string[]) => remote(s, ['kubectl', '--kubeconfig', '/etc/kubernetes/admin.conf', ...a]);
    expect(await kubectl('get', 'node', 'node1', '-o', 'jsonpath={.metadata.labels}')).toContain('node-role.kubernetes.io/control-plane');
    expect(await kubectl('get', 'cm', '-n', 'kube-system', 'kubeadm-config', 'kubelet-config', '-o', 'name')).toBe('configmap/kubeadm-config\nconfigmap/kubelet-config');
    expect(await kubectl('get', 'deploy/coredns', 'ds/kube-proxy', '-n', 'kube-system', '-o', 'name')).toBe('deployment.apps/coredns\ndaemonset.apps/kube-proxy');
    expect(host.readyz).toBe('ok');
  });

  it('nothing was pulled: kubeadm\'s own image list is the images table, all imported, and containerd logged no PullImage', () => {
    expect(Object.values(KUBEADM_IMAGES).map((i) => i.ref).sort()).toEqual(host.kubeadmImages);
    expect(host.images).toEqual(host.kubeadmImages);
    expect(host.pullLines).toEqual([]);
    expect(plane.kubeadm!.pulls).toEqual([]);
  });

  it('the four mirror Pods are Running on node1', () => {
    for (const c of CONTROL_PLANE) expect(host.mirrorPods.find((p) => p.name === `${c}-node1`), c).toMatchObject({ phase: 'Running', mirror: true, node: 'node1' });
    expect(plane.kubeadm!.mirrorPods.filter((p) => p.mirror).map((p) => p.name).sort()).toEqual(CONTROL_PLANE.map((c) => `${c}-node1`));
  });

  it('each static Pod runs in a kubelet-made container whose /proc argv is its manifest\'s command, as reported', () => {
    for (const c of CONTROL_PLANE) {
      const got = host.containers[c];
      expect(got, `${c}: no running container`).toBeDefined();
      expect(got!.argv, c).toEqual(host.manifests[c]);
      expect(got!.cgroup, c).toMatch(/:memory:\/kubepods\/(burstable|besteffort)\/pod/);
      expect(plane.live![c], c).toEqual({ pid: got!.pid, argv: got!.argv, sameAsManifest: true });
      expect(plane.commands[c]!.argv, c).toEqual(host.manifests[c]);
    }
  });

  it('the kubelet runs from kubeadm\'s drop-in with the KubeletConfiguration this machine needs', async () => {
    const pid = await remote(s, ['systemctl', 'show', '-p', 'MainPID', '--value', 'kubelet']);
    const argv = (await s.exec(['cat', `/proc/${pid}/cmdline`])).stdout.split('\0').filter(Boolean);
    expect(plane.kubeadm!.kubelet.argv).toEqual(argv);
    expect(argv).toEqual(expect.arrayContaining(['/usr/bin/kubelet', '--config=/var/lib/kubelet/config.yaml', '--kubeconfig=/etc/kubernetes/kubelet.conf', `--node-ip=${s.host.address}`]));
    const config = parseYaml((await s.readFile('/var/lib/kubelet/config.yaml')).toString('utf8')) as Record<string, unknown>;
    expect(config).toMatchObject({ failCgroupV1: false, cgroupDriver: 'cgroupfs', failSwapOn: false });
    expect(await remote(s, ['systemctl', 'show', '-p', 'DropInPaths', '--value', 'kubelet'])).toBe('/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf');
    // kubelet.conf names the rotated client pair after kubelet-finalize; the cert matrix still has it.
    expect(await remote(s, ['grep', 'client-certificate:', '/etc/kubernetes/kubelet.conf'])).toBe('client-certificate: /var/lib/kubelet/pki/kubelet-client-current.pem');
    expect(plane.certs.find((c) => c.role === 'kubeconfig/kubelet')?.facts).toMatchObject({ cn: 'system:node:node1', o: ['system:nodes'] });
  });
});
