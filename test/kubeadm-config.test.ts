// The kubeadm plane's generated config, read back as kubeadm reads it (YAML documents), and the
// join command as `kubeadm token create --print-join-command` prints it
// (k8s.io/kubernetes@v1.36.3/cmd/kubeadm/app/cmd/util/join.go:33-36, joined into one line at
// cmd/kubeadm/app/cmd/token.go:264-265). No lab: test/kubeadm-real.test.ts runs them for real.
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { kubeadmConfig, nodeRange } from '../harness/planes/kubeadm.ts';
import { joinConfig, parseJoinCommand } from '../harness/planes/kubeadm-join.ts';
import { withCertificateKey } from '../harness/planes/kubeadm-join-cp.ts';
import { crictlConfig } from '../harness/planes/crictl.ts';

const params = {
  kubernetesVersion: 'v1.36.3',
  clusterName: 'c',
  nodeName: 'node1',
  advertiseAddress: '10.0.0.2',
  serviceCIDR: '10.96.0.0/12',
  podCIDR: '10.244.0.0/16',
  dnsDomain: 'cluster.local',
  extraSANs: [],
  firstServiceIp: '10.96.0.1',
};
const HASH = `sha256:${'ab'.repeat(32)}`;
const PRINTED = `kubeadm join 10.0.0.2:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash ${HASH} \n`;

describe('kubeadm plane config', () => {
  it("a lab node's kubeadm.yaml carries a KubeProxyConfiguration that leaves conntrack alone, in nftables mode", () => {
    const docs = parseAllDocuments(kubeadmConfig(params, true)).map(
      (d) => d.toJS() as Record<string, unknown>,
    );
    expect(docs.map((d) => d.kind)).toEqual([
      'InitConfiguration',
      'ClusterConfiguration',
      'KubeletConfiguration',
      'KubeProxyConfiguration',
    ]);
    expect(docs[3]).toEqual({
      apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
      kind: 'KubeProxyConfiguration',
      mode: 'nftables',
      conntrack: { maxPerCore: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
    });
    expect(
      parseAllDocuments(kubeadmConfig(params)).map((d) => (d.toJS() as { kind: string }).kind),
    ).toEqual(['InitConfiguration', 'ClusterConfiguration']);
  });

  it("the printed join command becomes a JoinConfiguration with its endpoint, token and CA hash, and the node's registration", () => {
    const cfg = parseYaml(
      joinConfig(parseJoinCommand(PRINTED.trim()), 'node2', '10.0.0.3'),
    ) as Record<string, unknown>;
    expect(cfg).toMatchObject({
      apiVersion: 'kubeadm.k8s.io/v1beta4',
      kind: 'JoinConfiguration',
      discovery: {
        bootstrapToken: {
          apiServerEndpoint: '10.0.0.2:6443',
          token: 'abcdef.0123456789abcdef',
          caCertHashes: [HASH],
        },
      },
      nodeRegistration: {
        name: 'node2',
        criSocket: 'unix:///run/containerd/containerd.sock',
        kubeletExtraArgs: [{ name: 'node-ip', value: '10.0.0.3' }],
        ignorePreflightErrors: ['SystemVerification'],
      },
    });
    // A line that is not a join command is refused without echoing its token.
    expect(() =>
      parseJoinCommand('kubeadm join 10.0.0.2:6443 --token abcdef.0123456789abcdef'),
    ).toThrow(/--token <token>$/);
  });

  it("each node's Pod range is the next /24 of the pod subnet", () => {
    expect([0, 1, 2].map((i) => nodeRange('10.244.0.0/16', i))).toEqual([
      '10.244.0.0/24',
      '10.244.1.0/24',
      '10.244.2.0/24',
    ]);
    expect(nodeRange('10.244.255.0/16', 1)).toBe('10.245.0.0/24');
  });
  it("a control-plane member's JoinConfiguration carries its own API endpoint and the certificate key; a worker's has no controlPlane", () => {
    const join = parseJoinCommand(PRINTED.trim());
    const key = 'cd'.repeat(32);
    expect(parseYaml(joinConfig(join, 'node3', '10.0.0.4', key))).toMatchObject({
      kind: 'JoinConfiguration',
      controlPlane: {
        localAPIEndpoint: { advertiseAddress: '10.0.0.4', bindPort: 6443 },
        certificateKey: key,
      },
      nodeRegistration: {
        name: 'node3',
        kubeletExtraArgs: [{ name: 'node-ip', value: '10.0.0.4' }],
      },
    });
    expect(parseYaml(joinConfig(join, 'node2', '10.0.0.3'))).not.toHaveProperty('controlPlane');
  });

  it("the upload-certs config is init's kubeadm.yaml, every document and comment kept, with InitConfiguration.certificateKey", () => {
    const init = kubeadmConfig({ ...params, controlPlaneEndpoint: '10.0.0.2:6443' }, true);
    const key = 'ef'.repeat(32);
    const out = withCertificateKey(init, key);
    const docs = parseAllDocuments(out).map((d) => d.toJS() as Record<string, unknown>);
    expect(docs.map((d) => d.kind)).toEqual([
      'InitConfiguration',
      'ClusterConfiguration',
      'KubeletConfiguration',
      'KubeProxyConfiguration',
    ]);
    expect(docs[0]).toMatchObject({
      certificateKey: key,
      localAPIEndpoint: { advertiseAddress: '10.0.0.2' },
    });
    expect(docs[1]).toMatchObject({ controlPlaneEndpoint: '10.0.0.2:6443' });
    expect(
      parseAllDocuments(init)
        .slice(1)
        .map((d) => d.toJS()),
    ).toEqual(docs.slice(1));
    expect(out).toContain('# kubelet v1.36 refuses cgroup v1 unless false');
    expect(() => withCertificateKey('kind: ClusterConfiguration\n', key)).toThrow(
      /no InitConfiguration/,
    );
  });

  it("crictl.yaml names containerd's socket for both the runtime and the image service", () => {
    expect(parseYaml(crictlConfig())).toEqual({
      'runtime-endpoint': 'unix:///run/containerd/containerd.sock',
      'image-endpoint': 'unix:///run/containerd/containerd.sock',
      timeout: 10,
    });
  });
});
