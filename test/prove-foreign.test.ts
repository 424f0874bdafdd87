// `flags prove --flags-of kubeadm`: kubeadm's files mapped by role onto hardwire's host. Checked
// against what `hardwire render` writes for each host (the tree wire pushes), read here on its own:
// each mapped file is in that host's tree and holds the certificate of the role kubeadm's file
// holds (its subject CN, as kubeadm's certlist.go names it); etcd's through its unit's credentials;
// a file hardwire has no counterpart for is not run and says why.
import { beforeAll, describe, expect, it } from 'vitest';
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hardwire } from './helpers/cli.ts';
import { tempDir } from './helpers/tmp.ts';
import { loadInventory } from '../core/inventory/load.ts';
import { hardwireFiles } from '../harness/prove/foreign/roles.ts';
import { k0sRole, kubeadmRole, translateArgv } from '../harness/prove/foreign/translate.ts';
import { manifestCommand } from '../harness/prove/foreign/kubeadm.ts';
import { withOriginals } from '../harness/prove/index.ts';
import { besideArgv } from '../harness/delve/beside.ts';

const INV = 'hosts/example.yaml';
let tree = '';
const host = (name: string) => join(tree, 'demo', 'hosts', name);
const unitText = (h: string, c: string) =>
  readFileSync(join(host(h), 'etc/systemd/system', `${c}.service`), 'utf8');

/** kubeadm v1.36.3's file flags, as its manifests pass them (kubeadm init phase control-plane / etcd local), and the CN of the certificate each names. */
const KUBEADM_FILES: [string, string, string | undefined][] = [
  ['client-ca-file', '/etc/kubernetes/pki/ca.crt', 'kubernetes'],
  ['etcd-cafile', '/etc/kubernetes/pki/etcd/ca.crt', 'etcd-ca'],
  ['etcd-certfile', '/etc/kubernetes/pki/apiserver-etcd-client.crt', 'kube-apiserver-etcd-client'],
  ['etcd-keyfile', '/etc/kubernetes/pki/apiserver-etcd-client.key', undefined],
  [
    'kubelet-client-certificate',
    '/etc/kubernetes/pki/apiserver-kubelet-client.crt',
    'kube-apiserver-kubelet-client',
  ],
  ['proxy-client-cert-file', '/etc/kubernetes/pki/front-proxy-client.crt', 'front-proxy-client'],
  ['requestheader-client-ca-file', '/etc/kubernetes/pki/front-proxy-ca.crt', 'front-proxy-ca'],
  ['service-account-key-file', '/etc/kubernetes/pki/sa.pub', undefined],
  ['service-account-signing-key-file', '/etc/kubernetes/pki/sa.key', undefined],
  ['tls-cert-file', '/etc/kubernetes/pki/apiserver.crt', 'kube-apiserver'],
  ['tls-private-key-file', '/etc/kubernetes/pki/apiserver.key', undefined],
  ['kubeconfig', '/etc/kubernetes/controller-manager.conf', undefined],
  ['cluster-signing-key-file', '/etc/kubernetes/pki/ca.key', undefined],
  ['authentication-kubeconfig', '/etc/kubernetes/scheduler.conf', undefined],
];

beforeAll(() => {
  tree = tempDir('hardwire-foreign-');
  const r = hardwire(['render', '--inventory', INV, '--state-dir', tree]);
  expect(r.code, r.stderr).toBe(0);
});

describe("prove --flags-of kubeadm: translation onto hardwire's host", () => {
  it("names each kubeadm file by its role in kubeadm's layout", () => {
    expect(kubeadmRole('/etc/kubernetes/pki/etcd/server.crt')).toBe('cert:etcd-server');
    expect(kubeadmRole('/etc/kubernetes/pki/etcd/peer.key')).toBe('key:etcd-peer');
    expect(kubeadmRole('/etc/kubernetes/pki/front-proxy-ca.crt')).toBe('cert:front-proxy-ca');
    expect(kubeadmRole('/etc/kubernetes/controller-manager.conf')).toBe(
      'kubeconfig:controller-manager',
    );
    expect(kubeadmRole('/etc/kubernetes/pki/sa.pub')).toBe('file:sa.pub');
    expect(kubeadmRole('/var/lib/etcd')).toBe('dir:etcd-data');
    expect(kubeadmRole('/etc/kubernetes/manifests')).toBeUndefined();
  });

  it("maps every file kubeadm's control plane names to a file in the rendered host tree that holds the same certificate", () => {
    const inv = loadInventory(INV);
    const { flags, argv } = translateArgv(
      'kubeadm',
      [
        'kube-apiserver',
        ...KUBEADM_FILES.map(([f, p]) => `--${f}=${p}`),
        '--etcd-servers=https://127.0.0.1:2379',
      ],
      hardwireFiles(inv, inv.hosts[0]!),
    );
    expect(flags.filter((t) => t.notProvable)).toEqual([]);
    for (const [flag, path, cn] of KUBEADM_FILES) {
      const t = flags.find((x) => x.flag === flag)!;
      expect(t.original).toBe(path);
      expect(existsSync(join(host('cp-0'), t.run!)), `${flag}: ${t.run}`).toBe(true);
      if (cn)
        expect(
          new X509Certificate(readFileSync(join(host('cp-0'), t.run!))).subject,
          flag,
        ).toContain(`CN=${cn}`);
      expect(t.how, flag).toMatch(/role /);
    }
    // A value that is no file is run as kubeadm gives it.
    expect(flags.find((x) => x.flag === 'etcd-servers')).toMatchObject({
      run: 'https://127.0.0.1:2379',
      how: 'as kubeadm passes it',
    });
    expect(argv).toHaveLength(KUBEADM_FILES.length + 2);
  });

  it("runs etcd's cert and key where hardwire's unit loads them as credentials, the files read from the host tree", () => {
    const inv = loadInventory(INV);
    const unit = unitText('cp-0', 'etcd');
    const files = hardwireFiles(inv, inv.hosts[0]!, unit, 'etcd.service');
    const { flags } = translateArgv(
      'kubeadm',
      [
        'etcd',
        '--cert-file=/etc/kubernetes/pki/etcd/server.crt',
        '--peer-key-file=/etc/kubernetes/pki/etcd/peer.key',
        '--trusted-ca-file=/etc/kubernetes/pki/etcd/ca.crt',
        '--data-dir=/var/lib/etcd',
      ],
      files,
    );
    const byFlag = new Map(flags.map((t) => [t.flag, t]));
    // The credential's name and source, from the rendered unit's own LoadCredential= lines.
    const cred = (src: string) =>
      /^LoadCredential=([^:]+):(.+)$/m.exec(
        unit
          .split('\n')
          .filter((l) => l.endsWith(`:${src}`))
          .join('\n'),
      )![1];
    expect(byFlag.get('cert-file')!.run).toBe(
      `/run/credentials/etcd.service/${cred('/etc/kubernetes/pki/etcd/server.crt')}`,
    );
    expect(byFlag.get('peer-key-file')!.run).toBe(
      `/run/credentials/etcd.service/${cred('/etc/kubernetes/pki/etcd/peer.key')}`,
    );
    expect(
      new X509Certificate(readFileSync(join(host('cp-0'), '/etc/kubernetes/pki/etcd/server.crt')))
        .subject,
    ).toContain('CN=cp-0');
    // Not loaded as credentials: the CA and the data dir stay where hardwire put them.
    expect(byFlag.get('trusted-ca-file')!.run).toBe('/etc/kubernetes/pki/etcd/ca.crt');
    expect(unit).toContain(`--trusted-ca-file=${byFlag.get('trusted-ca-file')!.run}`);
    expect(unit).toContain(`--data-dir=${byFlag.get('data-dir')!.run}`);
  });

  it('does not run a flag whose file hardwire has no counterpart for, and says why', () => {
    const inv = loadInventory(INV);
    // super-admin.conf sits on the first control-plane host only (as kubeadm does): cp-1's tree has none.
    expect(existsSync(join(host('cp-1'), '/etc/kubernetes/super-admin.conf'))).toBe(false);
    const { flags, argv } = translateArgv(
      'kubeadm',
      [
        'kube-scheduler',
        '--kubeconfig=/etc/kubernetes/super-admin.conf',
        '--config=/etc/kubernetes/manifests/x.yaml',
        '--leader-elect=true',
      ],
      hardwireFiles(inv, inv.hosts[1]!),
    );
    expect(flags[0]).toMatchObject({
      flag: 'kubeconfig',
      original: '/etc/kubernetes/super-admin.conf',
      notProvable: expect.stringMatching(
        /hardwire places no file .*super-admin\.conf \(role kubeconfig:super-admin\)/,
      ),
    });
    expect(flags[0]!.run).toBeUndefined();
    expect(flags[1]).toMatchObject({
      flag: 'config',
      notProvable: expect.stringMatching(/no file of a role hardwire knows/),
    });
    expect(argv).toEqual(['kube-scheduler', '--leader-elect=true']);
    // The report keeps them as not provable, with kubeadm's value.
    const rows = withOriginals([], {
      tool: 'kubeadm',
      version: 'v1.36.3',
      sha256: '',
      command: [],
      source: '',
      flags,
    });
    expect(rows.map((r) => [r.flag, r.verdict, r.value])).toEqual([
      ['kubeconfig', 'not provable', '/etc/kubernetes/super-admin.conf'],
      ['config', 'not provable', '/etc/kubernetes/manifests/x.yaml'],
    ]);
    expect(rows[0]!.reason).toMatch(/^not provable on hardwire's host: /);
  });

  it("maps k0s's files by role (server.crt is the apiserver's, ccm.conf the controller-manager's) and its host's address and name to the host's", () => {
    expect(k0sRole('/var/lib/k0s/pki/server.key')).toBe('key:apiserver');
    expect(k0sRole('/var/lib/k0s/pki/etcd/peer.crt')).toBe('cert:etcd-peer');
    expect(k0sRole('/var/lib/k0s/pki/ccm.conf')).toBe('kubeconfig:controller-manager');
    expect(k0sRole('/var/lib/k0s/etcd')).toBe('dir:etcd-data');
    for (const none of [
      '/var/lib/k0s/pki/etcd/jwt.key',
      '/var/lib/k0s/konnectivity.conf',
      '/run/k0s/status.sock',
      '/var/lib/k0s/pki/konnectivity.crt',
    ])
      expect(k0sRole(none), none).toBeUndefined();
    const inv = loadInventory(INV);
    const h = inv.hosts[0]!;
    const hosts = [
      { from: '10.213.10.11', to: h.address, what: "the k0s controller's address" },
      { from: 'node1', to: h.name, what: 'its host name', whole: true },
    ];
    const { flags } = translateArgv(
      'k0s',
      [
        'kube-apiserver',
        '--tls-cert-file=/var/lib/k0s/pki/server.crt',
        '--kubeconfig=/var/lib/k0s/pki/ccm.conf',
        '--advertise-address=10.213.10.11',
        '--initial-cluster=node1=https://10.213.10.11:2380',
        '--name=node1',
        '--egress-selector-config-file=/var/lib/k0s/konnectivity.conf',
        '--auth-token=jwt,pub-key=/var/lib/k0s/pki/etcd/jwt.pub,priv-key=/var/lib/k0s/pki/etcd/jwt.key,sign-method=RS512',
      ],
      hardwireFiles(inv, h),
      hosts,
    );
    const run = new Map(flags.map((t) => [t.flag, t.run]));
    expect(
      new X509Certificate(readFileSync(join(host('cp-0'), run.get('tls-cert-file')!))).subject,
    ).toContain('CN=kube-apiserver');
    expect(readFileSync(join(host('cp-0'), run.get('kubeconfig')!), 'utf8')).toBe(
      readFileSync(join(host('cp-0'), '/etc/kubernetes/controller-manager.conf'), 'utf8'),
    );
    expect(run.get('advertise-address')).toBe(h.address);
    expect(run.get('initial-cluster')).toBe(`${h.name}=https://${h.address}:2380`);
    expect(run.get('name')).toBe(h.name);
    expect(flags.find((t) => t.flag === 'egress-selector-config-file')).toMatchObject({
      notProvable: expect.stringMatching(
        /k0s's \/var\/lib\/k0s\/konnectivity\.conf is no file of a role/,
      ),
    });
    // A path inside key=value (etcd's jwt keys, which hardwire does not make): not run either.
    expect(flags.find((t) => t.flag === 'auth-token')).toMatchObject({
      notProvable: expect.stringMatching(
        /k0s's \/var\/lib\/k0s\/pki\/etcd\/jwt\.pub is no file of a role/,
      ),
    });
  });

  it('reads the command of a static Pod manifest, and runs kube-apiserver beside the unit without an audit log kubeadm does not write', () => {
    expect(
      manifestCommand(
        'spec:\n  containers:\n  - command:\n    - etcd\n    - --name=a\n    args: ["--x=1"]\n',
      ),
    ).toEqual(['etcd', '--name=a', '--x=1']);
    const argv = besideArgv(
      ['kube-apiserver', '--secure-port=6443', '--allow-privileged=true'],
      '/d',
    );
    expect(argv).toEqual([
      '/d/kube-apiserver',
      '--allow-privileged=true',
      '--secure-port=16443',
      '--endpoint-reconciler-type=none',
    ]);
    expect(besideArgv(['x', '--audit-log-path=/var/log/a.log'], '/d')).toContain(
      '--audit-log-path=/d/audit.log',
    );
  });

  it('refuses a tool it cannot run with one line naming --flags-of, before touching any host', () => {
    const r = hardwire([
      'flags',
      'prove',
      '--component',
      'kube-apiserver',
      '--flags-of',
      'kops',
      '--inventory',
      INV,
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      /^error: --flags-of: "kops" is not a tool whose flags prove can run; give kubeadm or k0s/,
    );
  });
});
