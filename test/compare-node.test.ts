// compare's node rows (issue 23), the pure parts: a config file read at the flag map's granularity,
// /proc cmdline splitting, and why kubeadm passes each kubelet flag (its drop-in, kubeadm-flags.env).
// The lab run (test/compare.test.ts) checks the rows against /proc on the hosts.
import { describe, expect, it } from 'vitest';
import { loadFlagMap } from '../core/flags/map.ts';
import { configValues } from '../harness/planes/config-values.ts';
import { cmdlineArgv } from '../harness/planes/node-read.ts';
import { kubeletFlagReasons } from '../harness/planes/kubeadm-node-rows.ts';

const KUBELET_KEYS = new Set(loadFlagMap('kubelet', 'v1.36.3').config!.fields.map((f) => f.key));

describe('compare node rows (pure)', () => {
  it('a KubeletConfiguration by json path: into objects the map has fields below, else whole; apiVersion and kind skipped', () => {
    const yaml = [
      'apiVersion: kubelet.config.k8s.io/v1beta1',
      'kind: KubeletConfiguration',
      'authentication:',
      '  x509:',
      '    clientCAFile: /etc/kubernetes/pki/ca.crt',
      '  anonymous:',
      '    enabled: false',
      'evictionHard:',
      '  memory.available: 100Mi',
      'clusterDNS:',
      '- 10.96.0.10',
      'memorySwap: {}',
      'cgroupDriver: cgroupfs',
      'logging:',
      '  options:',
      '    json:',
      '      infoBufferSize: "0"',
    ].join('\n');
    expect(Object.fromEntries(configValues(yaml, KUBELET_KEYS))).toEqual({
      'authentication.x509.clientCAFile': '/etc/kubernetes/pki/ca.crt',
      'authentication.anonymous.enabled': 'false',
      evictionHard: '{"memory.available":"100Mi"}',
      clusterDNS: '["10.96.0.10"]',
      memorySwap: '{}',
      cgroupDriver: 'cgroupfs',
      'logging.options.json': '{"infoBufferSize":"0"}',
    });
  });

  it('/proc/<pid>/cmdline: NUL-separated, the trailing NUL dropped, an empty argument kept', () => {
    expect(
      cmdlineArgv('/usr/bin/kubelet\0--config=/var/lib/kubelet/config.yaml\0--x=\0\0'),
    ).toEqual(['/usr/bin/kubelet', '--config=/var/lib/kubelet/config.yaml', '--x=', '']);
  });

  it("kubeadm's kubelet flags: the drop-in's variables, then kubeadm-flags.env (node-ip from kubeletExtraArgs)", () => {
    const r = kubeletFlagReasons(
      'KUBELET_KUBEADM_ARGS="--node-ip=10.1.2.3 --container-runtime-endpoint=unix:///run/containerd/containerd.sock"\n',
      'v1.36.3',
    );
    expect(Object.keys(r).sort()).toEqual([
      '--bootstrap-kubeconfig',
      '--config',
      '--container-runtime-endpoint',
      '--kubeconfig',
      '--node-ip',
    ]);
    expect(r['--config']!.text).toMatch(/^KUBELET_CONFIG_ARGS in the 10-kubeadm\.conf drop-in/);
    expect(r['--kubeconfig']!.text).toMatch(/^KUBELET_KUBECONFIG_ARGS/);
    expect(r['--node-ip']!.text).toMatch(/kubeletExtraArgs/);
    expect(r['--container-runtime-endpoint']!.text).toMatch(
      /^KUBELET_KUBEADM_ARGS in \/var\/lib\/kubelet\/kubeadm-flags\.env/,
    );
  });
});
