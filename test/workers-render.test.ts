// Workers, rendered: a 1-control-plane + 2-worker inventory gives each worker its containerd,
// kubelet and kube-proxy units and configs and its own certificates, read back with the real openssl
// and systemd-analyze; hosts without the worker role get nothing of it.
import { beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { hardwire } from './helpers/cli.ts';
import { tempDir } from './helpers/tmp.ts';
import { parseInventory } from '../core/inventory/load.ts';
import { remoteCerts, renewableNames } from '../core/certs/catalog.ts';
import { renewOperatorCopies } from '../core/certs/renew.ts';
import { KUBECONFIGS, allLeaves, kubeconfigFiles } from '../core/pki/table.ts';
import { CLUSTER_ADMINS_BINDING, KUBE_VIP_BINDING } from '../core/apply/phases/rbac.ts';

const CP = `  - {name: cp-0, address: 198.51.100.10, roles: [etcd, control-plane]}
`;
const WORKERS = `  - {name: w-1, address: 198.51.100.21, roles: [worker]}
  - {name: w-2, address: 198.51.100.22, roles: [worker], podCIDR: 10.244.7.0/24}
`;
const inventory = (hosts: string) => `apiVersion: hardwire/v1
kind: Inventory
cluster:
  name: wk
hosts:
${hosts}`;

let dir: string;
let state: string;
const hostDir = (h: string) => join(state, 'wk', 'hosts', h);
const read = (h: string, p: string) => readFileSync(join(hostDir(h), p), 'utf8');
const WORKER = {
  'w-1': { address: '198.51.100.21', pod: '10.244.0.0/24' },
  'w-2': { address: '198.51.100.22', pod: '10.244.7.0/24' },
} as const;

function openssl(args: string[], input?: string): string {
  return execFileSync('openssl', args, {
    encoding: 'utf8',
    ...(input === undefined ? {} : { input }),
  });
}

/** Subject, SANs and EKU of a PEM, as openssl prints them. */
function x509(pem: string): string {
  return openssl(['x509', '-noout', '-subject', '-ext', 'subjectAltName,extendedKeyUsage'], pem);
}

/** The client cert inside a kubeconfig. */
function embedded(kubeconfig: string): string {
  const doc = parse(kubeconfig) as { users: { user: Record<string, string> }[] };
  return Buffer.from(doc.users[0]!.user['client-certificate-data']!, 'base64').toString();
}

function files(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(root.length))
    .sort();
}

beforeAll(() => {
  dir = tempDir();
  state = join(dir, 'state');
  writeFileSync(join(dir, 'workers.yaml'), inventory(CP + WORKERS));
  const r = hardwire(['render', '--inventory', join(dir, 'workers.yaml'), '--state-dir', state]);
  expect(r.code, r.stderr).toBe(0);
});

describe("a worker's rendered tree", () => {
  it('has containerd, the kubelet and kube-proxy with their configs, credentials and the CA cert, and nothing of the control plane', () => {
    for (const h of ['w-1', 'w-2']) {
      expect(files(hostDir(h))).toEqual([
        '/etc/cni/net.d/10-bridge.conflist',
        '/etc/containerd/certs.d/docker.io/hosts.toml',
        '/etc/containerd/config.toml',
        '/etc/kubernetes/kube-proxy.conf',
        '/etc/kubernetes/kubelet.conf',
        '/etc/kubernetes/pki/ca.crt',
        '/etc/sysctl.d/90-hardwire.conf',
        '/etc/systemd/system/containerd.service',
        '/etc/systemd/system/kube-proxy.service',
        '/etc/systemd/system/kubelet.service',
        '/var/lib/kube-proxy/config.conf',
        '/var/lib/kubelet/config.yaml',
        '/var/lib/kubelet/pki/kubelet.crt',
        '/var/lib/kubelet/pki/kubelet.key',
      ]);
      for (const p of [
        'etc/kubernetes/kubelet.conf',
        'etc/kubernetes/kube-proxy.conf',
        'var/lib/kubelet/pki/kubelet.key',
      ])
        expect(statSync(join(hostDir(h), p)).mode & 0o777, p).toBe(0o600);
    }
  });

  it('the control-plane host gets no worker file', () => {
    expect(
      files(hostDir('cp-0')).filter((f) =>
        /kubelet\.|kube-proxy|containerd|cni|\/var\/lib\/kube/.test(f),
      ),
    ).toEqual([]);
  });

  it('each kubelet serving cert: CN system:node:<node>, O system:nodes, SANs the node name and address, serverAuth only, signed by the cluster CA', () => {
    for (const [h, w] of Object.entries(WORKER)) {
      const crt = join(hostDir(h), 'var/lib/kubelet/pki/kubelet.crt');
      const out = x509(readFileSync(crt, 'utf8'));
      expect(out).toContain(`subject=O = system:nodes, CN = system:node:${h}\n`);
      expect(out).toMatch(
        new RegExp(
          `Subject Alternative Name: \\n\\s+DNS:${h}, IP Address:${w.address.replaceAll('.', '\\.')}\\n`,
        ),
      );
      expect(out).toMatch(/Extended Key Usage: \n\s+TLS Web Server Authentication\n/);
      // The CA the apiserver's --kubelet-certificate-authority names (/etc/kubernetes/pki/ca.crt on cp-0).
      expect(
        openssl([
          'verify',
          '-CAfile',
          join(hostDir('cp-0'), 'etc/kubernetes/pki/ca.crt'),
          crt,
        ]).trim(),
      ).toBe(`${crt}: OK`);
      // The key on the host is the cert's.
      const pub = (args: string[]) => openssl(args);
      expect(
        pub(['pkey', '-in', join(hostDir(h), 'var/lib/kubelet/pki/kubelet.key'), '-pubout']),
      ).toBe(pub(['x509', '-in', crt, '-noout', '-pubkey']));
    }
  });

  it("each kubelet.conf: the node's own client identity (CN system:node:<node>, O system:nodes, clientAuth only)", () => {
    for (const h of Object.keys(WORKER)) {
      const pem = embedded(read(h, 'etc/kubernetes/kubelet.conf'));
      const out = x509(pem);
      expect(out).toContain(`subject=O = system:nodes, CN = system:node:${h}\n`);
      expect(out).toMatch(/Extended Key Usage: \n\s+TLS Web Client Authentication\n/);
      expect(out).not.toContain('Subject Alternative Name');
      expect(
        openssl(['verify', '-CAfile', join(hostDir(h), 'etc/kubernetes/pki/ca.crt')], pem).trim(),
      ).toBe('stdin: OK');
    }
  });

  it('kube-proxy.conf: CN system:kube-proxy (bound by the built-in system:node-proxier), no O, clientAuth; one identity for every node', () => {
    const pems = Object.keys(WORKER).map((h) =>
      embedded(read(h, 'etc/kubernetes/kube-proxy.conf')),
    );
    const out = x509(pems[0]!);
    expect(out).toContain('subject=CN = system:kube-proxy\n');
    expect(out).toMatch(/Extended Key Usage: \n\s+TLS Web Client Authentication\n/);
    expect(pems[1]).toBe(pems[0]);
  });

  it('the kubelet config carries what the workers spike needed', () => {
    for (const [h, w] of Object.entries(WORKER)) {
      const c = parse(read(h, 'var/lib/kubelet/config.yaml')) as Record<string, unknown>;
      expect(c).toMatchObject({
        apiVersion: 'kubelet.config.k8s.io/v1beta1',
        kind: 'KubeletConfiguration',
        failCgroupV1: false,
        cgroupDriver: 'cgroupfs',
        containerRuntimeEndpoint: 'unix:///run/containerd/containerd.sock',
        address: w.address,
        readOnlyPort: 0,
        tlsCertFile: '/var/lib/kubelet/pki/kubelet.crt',
        tlsPrivateKeyFile: '/var/lib/kubelet/pki/kubelet.key',
        authentication: {
          anonymous: { enabled: false },
          webhook: { enabled: true },
          x509: { clientCAFile: '/etc/kubernetes/pki/ca.crt' },
        },
        authorization: { mode: 'Webhook' },
        clusterDNS: ['10.96.0.10'],
        clusterDomain: 'cluster.local',
      });
      const unit = read(h, 'etc/systemd/system/kubelet.service');
      for (const f of [
        `--node-ip=${w.address}`,
        `--hostname-override=${h}`,
        '--kubeconfig=/etc/kubernetes/kubelet.conf',
        '--config=/var/lib/kubelet/config.yaml',
      ])
        expect(unit).toContain(`  ${f}`);
      expect(unit).toMatch(/^After=network-online\.target containerd\.service$/m);
    }
  });

  it("containerd: the local pause as sandbox image, restrict_oom_score_adj, runc by path, the CNI dirs; the node's pod CIDR in its bridge network", () => {
    for (const [h, w] of Object.entries(WORKER)) {
      const toml = read(h, 'etc/containerd/config.toml');
      for (const line of [
        'version = 4',
        'sandbox = "hardwire.local/pause:3.10.2"',
        'restrict_oom_score_adj = true',
        'BinaryName = "/usr/local/bin/runc"',
        'bin_dirs = ["/usr/local/bin"]',
        'conf_dir = "/etc/cni/net.d"',
        'SystemdCgroup = false',
      ]) {
        expect(toml.split('\n').map((l) => l.trim())).toContain(line);
      }
      const cni = JSON.parse(read(h, 'etc/cni/net.d/10-bridge.conflist')) as {
        plugins: { type: string; ipam?: { ranges: { subnet: string }[][] } }[];
      };
      expect(cni.plugins.map((p) => p.type)).toEqual(['bridge', 'portmap']);
      expect(cni.plugins[0]!.ipam!.ranges).toEqual([[{ subnet: w.pod }]]);
      const unit = read(h, 'etc/systemd/system/containerd.service');
      expect(unit).toMatch(/^Type=notify$/m);
      expect(unit).toMatch(/^Delegate=yes$/m);
      expect(unit).toMatch(/^KillMode=process$/m);
    }
  });

  it('kube-proxy: the cluster pod CIDR, the node name, nftables, its kubeconfig', () => {
    for (const h of Object.keys(WORKER)) {
      expect(parse(read(h, 'var/lib/kube-proxy/config.conf'))).toMatchObject({
        apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
        kind: 'KubeProxyConfiguration',
        clusterCIDR: '10.244.0.0/16',
        hostnameOverride: h,
        mode: 'nftables',
        clientConnection: { kubeconfig: '/etc/kubernetes/kube-proxy.conf' },
        conntrack: { maxPerCore: 0 },
      });
    }
  });

  it('units pass systemd-analyze verify, apart from the binaries not installed here', () => {
    const unitDir = join(hostDir('w-1'), 'etc/systemd/system');
    const units = readdirSync(unitDir).map((f) => join(unitDir, f));
    expect(units).toHaveLength(3);
    const r = spawnSync('systemd-analyze', ['verify', ...units], { encoding: 'utf8' });
    const problems = (r.stderr + r.stdout)
      .split('\n')
      .filter(
        (l) =>
          l.trim() &&
          !/Command \/usr\/local\/bin\/[a-z-]+ is not executable: No such file or directory/.test(
            l,
          ),
      );
    expect(problems).toEqual([]);
  });
});

describe('workers and the rest of the PKI', () => {
  it("adding workers changes on a control-plane host only the apiserver unit's routes to their Pods and the lab registry it then runs, and a control-plane-only inventory issues no worker identity", () => {
    // The same operator PKI (CAs and leaves are kept), rendered without the workers.
    const cpOnly = join(dir, 'cp-only');
    cpSync(state, cpOnly, { recursive: true });
    writeFileSync(join(dir, 'cp.yaml'), inventory(CP));
    const r = hardwire(['render', '--inventory', join(dir, 'cp.yaml'), '--state-dir', cpOnly]);
    expect(r.code, r.stderr).toBe(0);
    const a = join(state, 'wk', 'hosts', 'cp-0');
    const b = join(cpOnly, 'wk', 'hosts', 'cp-0');
    // With workers, the first control-plane host runs the lab registry (issue 44): its unit, config and cert.
    const REGISTRY = [
      '/etc/distribution/config.yml',
      '/etc/kubernetes/pki/registry.crt',
      '/etc/kubernetes/pki/registry.key',
      '/etc/systemd/system/registry.service',
    ];
    expect(files(b)).toEqual(files(a).filter((f) => !REGISTRY.includes(f)));
    expect(files(a).filter((f) => REGISTRY.includes(f))).toEqual(REGISTRY);
    const UNIT = '/etc/systemd/system/kube-apiserver.service';
    for (const f of files(b).filter((x) => x !== UNIT))
      expect(readFileSync(join(b, f)).equals(readFileSync(join(a, f))), f).toBe(true);
    // cp-0 runs no kubelet: its apiserver unit adds a route to each worker's Pod range (KTHW's routes on its server), and nothing else changes.
    const [withW, without] = [
      readFileSync(join(a, UNIT), 'utf8').split('\n'),
      readFileSync(join(b, UNIT), 'utf8').split('\n'),
    ];
    const added = withW.filter((l) => !without.includes(l));
    expect(added.filter((l) => !l.startsWith('#'))).toEqual(
      Object.values(WORKER).map(
        (w) => `ExecStartPre=/usr/bin/ip route replace ${w.pod} via ${w.address}`,
      ),
    );
    expect(added.filter((l) => l.startsWith('#')).length).toBe(2);
    expect(without.filter((l) => !withW.includes(l))).toEqual([]);
    const inv = parseInventory(inventory(CP));
    const ids = allLeaves(inv).map((l) => l.id);
    expect(
      ids.filter((id) =>
        ['kubelet-server', 'kubeconfig-kubelet', 'kubeconfig-kube-proxy'].includes(id),
      ),
    ).toEqual([]);
    expect(ids).toContain('apiserver-kubelet-client');
  });

  it("certs check covers each worker's certs, and certs renew reissues every node's kubelet cert under its own subject", async () => {
    const inv = parseInventory(inventory(CP + WORKERS));
    expect(
      remoteCerts(inv, inv.hosts.find((h) => h.name === 'w-2')!).map((c) => [
        c.name,
        c.leafId,
        c.path,
        c.embedded,
      ]),
    ).toEqual([
      ['kube-proxy.conf', 'kubeconfig-kube-proxy', '/etc/kubernetes/kube-proxy.conf', true],
      ['kubelet-server', 'kubelet-server', '/var/lib/kubelet/pki/kubelet.crt', false],
      ['kubelet.conf', 'kubeconfig-kubelet', '/etc/kubernetes/kubelet.conf', true],
    ]);
    expect(renewableNames(inv).get('kubelet.conf')).toBe('kubeconfig-kubelet');
    const before = Object.keys(WORKER).map((h) =>
      openssl(
        ['x509', '-noout', '-subject', '-serial', '-enddate'],
        embedded(readFileSync(join(state, 'wk', 'kubeconfigs', h, 'kubelet.conf'), 'utf8')),
      ),
    );
    const log = { info: () => {}, warn: () => {}, step: () => {} };
    const renewed = await renewOperatorCopies(
      state,
      inv,
      ['kubelet-server', 'kubeconfig-kubelet'],
      { newKey: false, log },
    );
    expect(renewed.map((x) => `${x.leafId}@${x.host}`).sort()).toEqual([
      'kubeconfig-kubelet@w-1',
      'kubeconfig-kubelet@w-2',
      'kubelet-server@w-1',
      'kubelet-server@w-2',
    ]);
    Object.keys(WORKER).forEach((h, i) => {
      const after = openssl(
        ['x509', '-noout', '-subject', '-serial', '-enddate'],
        embedded(readFileSync(join(state, 'wk', 'kubeconfigs', h, 'kubelet.conf'), 'utf8')),
      );
      expect(after.split('\n')[0]).toBe(`subject=O = system:nodes, CN = system:node:${h}`);
      expect(after).not.toBe(before[i]);
    });
  });

  it("each identity says what authorizes it, and fits it: Node authorizer identities are system:node:<name> in system:nodes, wire's binding is the one it creates", () => {
    const inv = parseInventory(inventory(CP + WORKERS));
    expect(Object.fromEntries(KUBECONFIGS.map((k) => [k.id, k.authorizedBy.by]))).toEqual({
      admin: 'wire',
      'super-admin': 'masters',
      'kube-vip': 'wire',
      'controller-manager': 'builtIn',
      scheduler: 'builtIn',
      kubelet: 'node',
      'kube-proxy': 'builtIn',
    });
    const nodeFiles = kubeconfigFiles(inv).filter((f) => f.spec.authorizedBy.by === 'node');
    expect(nodeFiles.map((f) => f.host)).toEqual(['w-1', 'w-2']);
    for (const f of nodeFiles)
      expect([f.leaf.cn, f.leaf.o]).toEqual([`system:node:${f.host}`, ['system:nodes']]);
    for (const k of KUBECONFIGS) {
      if (k.authorizedBy.by === 'masters') expect(k.o).toContain('system:masters');
      const by = k.authorizedBy;
      if (by.by !== 'wire') continue;
      // Each binding wire creates names this identity, by its group or by its user.
      const binding = [CLUSTER_ADMINS_BINDING, KUBE_VIP_BINDING].find(
        (b) => b.metadata.name === by.binding,
      );
      expect(binding, `${k.id}: wire creates ${JSON.stringify(k.authorizedBy)}`).toBeDefined();
      const subject = binding!.subjects[0]!;
      if (subject.kind === 'Group') expect(k.o).toContain(subject.name);
      else expect(k.cn).toBe(subject.name);
    }
  });
});
