// The workers' rendered configs, loaded by the real binaries at their pinned versions (built by
// `components build workers` on branch workers into the cache): containerd dumps its merged config,
// kube-proxy loads and validates its config and writes it back, and the kubelet loads and validates
// its config on this machine (cgroup v1: failCgroupV1 false must pass) as an unprivileged user, so it
// stops at its first file and changes nothing here. Not in test:unit: it needs those binaries.
import { beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { hardwire } from './helpers/cli.ts';
import { tempDir } from './helpers/tmp.ts';
import { requireInputs, skipWithoutInputs } from './helpers/inputs.ts';
import { binRoot } from '../core/components/binaries/cache.ts';

const bin = (name: string, version: string) => join(binRoot(), name, version, name);
const KUBELET = bin('kubelet', 'v1.36.3');
const KUBE_PROXY = bin('kube-proxy', 'v1.36.3');
const CONTAINERD = bin('containerd', 'v2.3.3');
const INPUTS = [KUBELET, KUBE_PROXY, CONTAINERD];

let node: string;
let outDir: string;

/** Runs a binary as nobody when we are root (the kubelet would otherwise act on this machine). */
function run(file: string, args: string[]): { code: number; out: string } {
  const argv =
    process.getuid?.() === 0
      ? [
          'setpriv',
          '--reuid=65534',
          '--regid=65534',
          '--clear-groups',
          '--inh-caps=-all',
          '--bounding-set=-all',
          file,
          ...args,
        ]
      : [file, ...args];
  const r = spawnSync(argv[0]!, argv.slice(1), {
    encoding: 'utf8',
    timeout: 60_000,
    killSignal: 'SIGKILL',
  });
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

beforeAll(() => {
  if (skipWithoutInputs(...INPUTS)) return;
  const dir = tempDir();
  writeFileSync(
    join(dir, 'inv.yaml'),
    `apiVersion: hardwire/v1
kind: Inventory
cluster: {name: wk}
hosts:
  - {name: cp-0, address: 198.51.100.10}
  - {name: w-1, address: 198.51.100.21, roles: [worker]}
`,
  );
  const r = hardwire([
    'render',
    '--inventory',
    join(dir, 'inv.yaml'),
    '--state-dir',
    join(dir, 'state'),
  ]);
  expect(r.code, r.stderr).toBe(0);
  // A copy nobody may read (the rendered kubeconfig and keys are 0600 root).
  node = join(dir, 'node');
  cpSync(join(dir, 'state', 'wk', 'hosts', 'w-1'), node, { recursive: true });
  chmodSync(dir, 0o755);
  spawnSync('chmod', ['-R', 'a+rX', node]);
  // Where the unprivileged binaries may write (kube-proxy's --write-config-to).
  outDir = join(dir, 'out');
  mkdirSync(outDir, { mode: 0o777 });
  chmodSync(outDir, 0o777);
});

describe.skipIf(skipWithoutInputs(...INPUTS))(
  "the workers' configs, loaded by their binaries",
  () => {
    it('containerd 2.3.3 takes config.toml as is: no migration, the sandbox image, runc and CNI dirs', () => {
      requireInputs(...INPUTS);
      const r = run(CONTAINERD, [
        '--config',
        join(node, 'etc/containerd/config.toml'),
        'config',
        'dump',
      ]);
      expect(r.code, r.out).toBe(0);
      expect(r.out).not.toMatch(/level=(warning|error)/);
      expect(r.out).toMatch(/^version = 4$/m);
      for (const line of [
        "sandbox = 'hardwire.local/pause:3.10.2'",
        'restrict_oom_score_adj = true',
        "BinaryName = '/usr/local/bin/runc'",
        "bin_dirs = ['/usr/local/bin']",
        "conf_dir = '/etc/cni/net.d'",
      ]) {
        expect(r.out.split('\n').map((l) => l.trim())).toContain(line);
      }
    });

    it('kube-proxy v1.36.3 decodes its config strictly, validates it and writes it back', () => {
      const out = join(outDir, 'kube-proxy.yaml');
      const r = run(KUBE_PROXY, [
        `--config=${join(node, 'var/lib/kube-proxy/config.conf')}`,
        `--write-config-to=${out}`,
      ]);
      expect(r.code, r.out).toBe(0);
      expect(r.out).not.toContain('strict decoding');
      expect(parse(readFileSync(out, 'utf8'))).toMatchObject({
        mode: 'nftables',
        clusterCIDR: '10.244.0.0/16',
        hostnameOverride: 'w-1',
        conntrack: { maxPerCore: 0 },
      });
    });

    it('the kubelet v1.36.3 decodes its config strictly and validates it on this cgroup v1 machine, then stops at its first missing file', () => {
      const r = run(KUBELET, [
        `--config=${join(node, 'var/lib/kubelet/config.yaml')}`,
        `--kubeconfig=${join(node, 'etc/kubernetes/kubelet.conf')}`,
        '--node-ip=198.51.100.21',
        '--hostname-override=w-1',
        `--root-dir=${join(outDir, 'kubelet-root')}`,
      ]);
      expect(r.code).not.toBe(0);
      expect(r.out).not.toContain('strict decoding');
      expect(r.out).not.toContain('failed to validate kubelet configuration');
      // Past loading and validation: it runs, and fails on the CA path that exists only on a node.
      expect(r.out).toContain(
        'failed to run Kubelet: open /etc/kubernetes/pki/ca.crt: no such file or directory',
      );
    });
  },
);
