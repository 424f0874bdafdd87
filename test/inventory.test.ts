import { describe, expect, it } from 'vitest';
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { parseInventory } from '../core/inventory/load.ts';
import { InputError } from '../lib/errors.ts';
import { hardwire } from './helpers/cli.ts';
import { hardwireAsync, inBatches } from './helpers/cli-async.ts';
import { tempDir } from './helpers/tmp.ts';

const base = `apiVersion: hardwire/v1
kind: Inventory
cluster:
  name: demo
hosts:
  - name: cp-0
    address: 198.51.100.10
  - name: cp-1
    address: 198.51.100.11
  - name: cp-2
    address: 198.51.100.12
`;

function errorOf(text: string): InputError {
  try {
    parseInventory(text, 'inv.yaml');
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
  throw new Error('expected an InputError');
}

describe('inventory', () => {
  it('fills the documented defaults', () => {
    const inv = parseInventory(base);
    expect(inv.cluster.kubernetesVersion).toBe('v1.36.3');
    expect(inv.cluster.serviceCIDR).toBe('10.96.0.0/12');
    expect(inv.serviceIp).toBe('10.96.0.1');
    expect(inv.endpoint).toEqual({ host: '198.51.100.10', port: 6443 });
    expect(inv.hosts[1]!.roles).toEqual(['etcd', 'control-plane']);
    expect(inv.hosts[1]!.ssh).toEqual({
      user: 'root',
      port: 22,
      identityFile: '~/.ssh/id_ed25519',
      proxyJump: '',
      become: '',
    });
    expect(inv.warnings).toEqual([]);
  });

  const cases: [string, string, RegExp][] = [
    [
      'unknown key',
      base.replace('  name: demo', '  name: demo\n  podCidr: 10.0.0.0/8'),
      /^cluster\.podCidr: unknown key; valid keys here are name, kubernetesVersion, serviceCIDR, podCIDR/,
    ],
    [
      'unknown host key',
      base.replace('    address: 198.51.100.11', '    adress: 198.51.100.11'),
      /^hosts\[1\]\.adress: unknown key/,
    ],
    [
      'bad CIDR',
      base.replace('  name: demo', '  name: demo\n  serviceCIDR: 10.96.0.0/33'),
      /^cluster\.serviceCIDR: "10\.96\.0\.0\/33" is not an IPv4 network CIDR/,
    ],
    [
      'CIDR with host bits',
      base.replace('  name: demo', '  name: demo\n  podCIDR: 10.244.1.0/16'),
      /^cluster\.podCIDR: /,
    ],
    [
      'duplicate name',
      base.replace('name: cp-1', 'name: cp-0'),
      /^hosts\[1\]\.name: "cp-0" duplicates hosts\[0\]\.name/,
    ],
    [
      'duplicate address',
      base.replace('198.51.100.11', '198.51.100.10'),
      /^hosts\[1\]\.address: 198\.51\.100\.10 duplicates hosts\[0\]\.address/,
    ],
    [
      'bad address',
      base.replace('198.51.100.11', '198.51.100.300'),
      /^hosts\[1\]\.address: must be an IPv4 address/,
    ],
    [
      'zero control-plane',
      base.replaceAll('    address: 198.51.100.1', '    roles: [etcd]\n    address: 198.51.100.1'),
      /^hosts\[\]\.roles: no host has the control-plane role/,
    ],
    [
      'overlapping CIDRs',
      base.replace('  name: demo', '  name: demo\n  podCIDR: 10.96.0.0/16'),
      /^cluster\.podCIDR: 10\.96\.0\.0\/16 overlaps cluster\.serviceCIDR 10\.96\.0\.0\/12/,
    ],
    [
      'wrong type',
      base.replace('  name: demo', '  name: demo\n  extraSANs: foo'),
      /^cluster\.extraSANs: expected array, got string/,
    ],
    [
      'missing cluster name',
      base.replace('  name: demo\n', '  dnsDomain: cluster.local\n'),
      /^cluster\.name: expected string \(it is missing\)/,
    ],
    [
      'bad apiVersion',
      base.replace('hardwire/v1', 'hardwire/v2'),
      /^apiVersion: must be "hardwire\/v1"/,
    ],
    [
      'YAML syntax',
      base.replace('kind: Inventory', 'kind: [Inventory'),
      /^inv\.yaml(:\d+)?: YAML syntax/,
    ],
    ['empty file', '', /inventory is empty/],
    [
      'bad port',
      base.replace(
        '    address: 198.51.100.10',
        '    address: 198.51.100.10\n    ssh: {port: 70000}',
      ),
      /^hosts\[0\]\.ssh\.port: /,
    ],
    [
      'SSH address that is neither IPv4 nor a DNS name',
      base.replace(
        '    address: 198.51.100.11',
        '    address: 198.51.100.11\n    ssh: {address: "node 1.example.com"}',
      ),
      /^hosts\[1\]\.ssh\.address: "node 1\.example\.com" is not a DNS name: .*; use an IPv4 address or a DNS name such as node1\.example\.com$/,
    ],
    [
      'SSH address that is no IPv4 address',
      base.replace(
        '    address: 198.51.100.12',
        '    address: 198.51.100.12\n    ssh: {address: 203.0.113.300}',
      ),
      /^hosts\[2\]\.ssh\.address: "203\.0\.113\.300" is not a valid IPv4 address; use an IPv4 address or a DNS name/,
    ],
  ];
  for (const [name, text, re] of cases) {
    it(`rejects ${name} with one line naming the field`, () => {
      const e = errorOf(text);
      expect(e.message).toMatch(re);
      expect(e.message).not.toContain('\n');
      expect(e.exitCode).toBe(2);
    });
  }

  it('warns, but accepts, an even number of etcd members', () => {
    const inv = parseInventory(base.replace('  - name: cp-2\n    address: 198.51.100.12\n', ''));
    expect(inv.etcdHosts).toHaveLength(2);
    expect(inv.warnings.join()).toMatch(/2 etcd members .* odd number for quorum/);
  });

  it('the CLI exits 2 with one stderr line and writes nothing', () => {
    const dir = tempDir();
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, base.replace('198.51.100.11', '198.51.100.10'));
    const r = hardwire(['pki', '--inventory', file, '--state-dir', join(dir, 'state')]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^error: hosts\[1\]\.address: /);
    expect(r.stdout).toBe('');
    const missing = hardwire(['pki', '--inventory', join(dir, 'nope.yaml')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: --inventory: cannot read .*nope\.yaml \(ENOENT\)/);
  });
});

// Every inventory value that ends up in a component flag or a certificate, malformed the way the
// component that consumes it would refuse it on a host. Each must stop the real CLI before anything is
// written: exit 2, one line naming the field, the state dir untouched.
type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const edit = (fn: (d: Doc) => void): string => {
  const d = parse(base) as Doc;
  fn(d);
  return stringify(d);
};
const extra = (component: string, flags: Record<string, string>) => (d: Doc) => {
  d.cluster.extraArgs = { [component]: flags };
};

const MALFORMED: { name: string; field: string; text: string }[] = [
  {
    name: 'cluster name longer than a DNS label',
    field: 'cluster.name',
    text: edit((d) => {
      d.cluster.name = 'c'.repeat(64);
    }),
  },
  {
    name: 'Kubernetes version without a version table row',
    field: 'cluster.kubernetesVersion',
    text: edit((d) => {
      d.cluster.kubernetesVersion = 'v1.35.0';
    }),
  },
  {
    name: 'service CIDR too small for the apiserver (/30)',
    field: 'cluster.serviceCIDR',
    text: edit((d) => {
      d.cluster.serviceCIDR = '10.96.0.0/30';
    }),
  },
  {
    name: 'service CIDR larger than /12',
    field: 'cluster.serviceCIDR',
    text: edit((d) => {
      d.cluster.serviceCIDR = '10.0.0.0/8';
    }),
  },
  {
    name: 'service CIDR without a prefix',
    field: 'cluster.serviceCIDR',
    text: edit((d) => {
      d.cluster.serviceCIDR = '10.96.0.0';
    }),
  },
  {
    name: 'pod CIDR smaller than one node range (/25 < /24)',
    field: 'cluster.podCIDR',
    text: edit((d) => {
      d.cluster.podCIDR = '10.244.0.0/25';
    }),
  },
  {
    name: 'pod CIDR smaller than the node mask set in extraArgs',
    field: 'cluster.podCIDR',
    text: edit((d) => {
      d.cluster.podCIDR = '10.244.0.0/22';
      extra('kube-controller-manager', { 'node-cidr-mask-size': '20' })(d);
    }),
  },
  {
    name: 'pod CIDR more than 16 bits wider than a node range',
    field: 'cluster.podCIDR',
    text: edit((d) => {
      d.cluster.podCIDR = '172.0.0.0/7';
    }),
  },
  {
    name: 'DNS domain with an empty label',
    field: 'cluster.dnsDomain',
    text: edit((d) => {
      d.cluster.dnsDomain = 'cluster..local';
    }),
  },
  {
    name: 'DNS domain with a label over 63 characters',
    field: 'cluster.dnsDomain',
    text: edit((d) => {
      d.cluster.dnsDomain = `${'a'.repeat(64)}.local`;
    }),
  },
  {
    name: 'endpoint host starting with "-"',
    field: 'cluster.apiServerEndpoint',
    text: edit((d) => {
      d.cluster.apiServerEndpoint = '-api.example.com:6443';
    }),
  },
  {
    name: 'endpoint host that is no IPv4 address',
    field: 'cluster.apiServerEndpoint',
    text: edit((d) => {
      d.cluster.apiServerEndpoint = '300.1.2.3:6443';
    }),
  },
  {
    name: 'endpoint host in upper case',
    field: 'cluster.apiServerEndpoint',
    text: edit((d) => {
      d.cluster.apiServerEndpoint = 'API.example.com';
    }),
  },
  {
    name: 'endpoint port 0',
    field: 'cluster.apiServerEndpoint',
    text: edit((d) => {
      d.cluster.apiServerEndpoint = 'api.example.com:0';
    }),
  },
  {
    name: 'SAN with a space',
    field: 'cluster.extraSANs[0]',
    text: edit((d) => {
      d.cluster.extraSANs = ['api example.com'];
    }),
  },
  {
    name: 'SAN that is no IPv4 address',
    field: 'cluster.extraSANs[1]',
    text: edit((d) => {
      d.cluster.extraSANs = ['api.example.com', '10.0.0.256'];
    }),
  },
  {
    name: 'SAN with a trailing dot',
    field: 'cluster.extraSANs[0]',
    text: edit((d) => {
      d.cluster.extraSANs = ['api.example.com.'];
    }),
  },
  {
    name: 'extraArgs flag the component does not register',
    field: 'cluster.extraArgs.kube-scheduler.leader-elekt',
    text: edit(extra('kube-scheduler', { 'leader-elekt': 'true' })),
  },
  {
    name: 'extraArgs --help (the binary prints and exits)',
    field: 'cluster.extraArgs.kube-apiserver.help',
    text: edit(extra('kube-apiserver', { help: 'true' })),
  },
  {
    name: 'extraArgs bool flag with "yes"',
    field: 'cluster.extraArgs.kube-scheduler.leader-elect',
    text: edit(extra('kube-scheduler', { 'leader-elect': 'yes' })),
  },
  {
    name: 'extraArgs int flag with a word',
    field: 'cluster.extraArgs.kube-apiserver.max-requests-inflight',
    text: edit(extra('kube-apiserver', { 'max-requests-inflight': 'many' })),
  },
  {
    name: 'extraArgs int32 flag out of range',
    field: 'cluster.extraArgs.kube-controller-manager.concurrent-deployment-syncs',
    text: edit(extra('kube-controller-manager', { 'concurrent-deployment-syncs': '3000000000' })),
  },
  {
    name: 'extraArgs uint flag negative',
    field: 'cluster.extraArgs.etcd.election-timeout',
    text: edit(extra('etcd', { 'election-timeout': '-5' })),
  },
  {
    name: 'extraArgs duration without a unit',
    field: 'cluster.extraArgs.kube-controller-manager.node-monitor-grace-period',
    text: edit(extra('kube-controller-manager', { 'node-monitor-grace-period': '40' })),
  },
  {
    name: 'extraArgs IP flag with a name',
    field: 'cluster.extraArgs.kube-scheduler.bind-address',
    text: edit(extra('kube-scheduler', { 'bind-address': 'localhost' })),
  },
  {
    name: 'extraArgs value with a newline',
    field: 'cluster.extraArgs.kube-apiserver.v',
    text: edit(extra('kube-apiserver', { v: '2\n--anonymous-auth=true' })),
  },
  {
    name: 'extraArgs value with a backslash',
    field: 'cluster.extraArgs.etcd.log-level',
    text: edit(extra('etcd', { 'log-level': 'info\\' })),
  },
  {
    name: 'extraArgs overriding the service range cluster.serviceCIDR sets',
    field: 'cluster.extraArgs.kube-apiserver.service-cluster-ip-range',
    text: edit(extra('kube-apiserver', { 'service-cluster-ip-range': '10.100.0.0/16' })),
  },
  {
    name: 'extraArgs overriding the pod range cluster.podCIDR sets',
    field: 'cluster.extraArgs.kube-controller-manager.cluster-cidr',
    text: edit(extra('kube-controller-manager', { 'cluster-cidr': '10.200.0.0/16' })),
  },
  {
    name: 'extraArgs moving the apiserver off the port kubeconfigs and gates use',
    field: 'cluster.extraArgs.kube-apiserver.secure-port',
    text: edit(extra('kube-apiserver', { 'secure-port': '8443' })),
  },
  {
    name: 'certValidity leafDays over 10 years',
    field: 'cluster.certValidity.leafDays',
    text: edit((d) => {
      d.cluster.certValidity = { leafDays: 4000 };
    }),
  },
  {
    name: 'certValidity caDays of zero',
    field: 'cluster.certValidity.caDays',
    text: edit((d) => {
      d.cluster.certValidity = { caDays: 0 };
    }),
  },
  {
    name: 'certValidity leaves outliving their CA',
    field: 'cluster.certValidity.leafDays',
    text: edit((d) => {
      d.cluster.certValidity = { leafDays: 400, caDays: 300 };
    }),
  },
  {
    name: 'host name not a DNS label',
    field: 'hosts[0].name',
    text: edit((d) => {
      d.hosts[0].name = 'Node_1';
    }),
  },
  {
    name: 'host address in loopback',
    field: 'hosts[0].address',
    text: edit((d) => {
      d.hosts[0].address = '127.0.0.1';
    }),
  },
  {
    name: 'host address link-local',
    field: 'hosts[1].address',
    text: edit((d) => {
      d.hosts[1].address = '169.254.10.1';
    }),
  },
  {
    name: 'host address unspecified',
    field: 'hosts[2].address',
    text: edit((d) => {
      d.hosts[2].address = '0.0.0.0';
    }),
  },
  {
    name: 'host address multicast',
    field: 'hosts[1].address',
    text: edit((d) => {
      d.hosts[1].address = '224.0.0.9';
    }),
  },
  {
    name: 'host address broadcast',
    field: 'hosts[1].address',
    text: edit((d) => {
      d.hosts[1].address = '255.255.255.255';
    }),
  },
  {
    name: 'SSH port 0',
    field: 'hosts[0].ssh.port',
    text: edit((d) => {
      d.hosts[0].ssh = { port: 0 };
    }),
  },
  {
    name: 'SSH address that reads as an ssh option',
    field: 'hosts[1].ssh.address',
    text: edit((d) => {
      d.hosts[1].ssh = { address: '-oProxyCommand=true' };
    }),
  },
  {
    name: 'SSH address in IPv6',
    field: 'hosts[0].ssh.address',
    text: edit((d) => {
      d.hosts[0].ssh = { address: '2001:db8::1' };
    }),
  },
  {
    name: "extraArgs taking over the kubelet's node IP",
    field: 'cluster.extraArgs.kubelet.node-ip',
    text: edit((d) => {
      workers({})(d);
      extra('kubelet', { 'node-ip': '198.51.100.99' })(d);
    }),
  },
  {
    name: 'a role that is not one',
    field: 'hosts[3].roles[0]',
    text: edit(workers({ roles: ['wroker'] })),
  },
  {
    name: 'a pod CIDR on a host without the worker role',
    field: 'hosts[0].podCIDR',
    text: edit((d) => {
      d.hosts[0].podCIDR = '10.244.9.0/24';
    }),
  },
  {
    name: 'a worker pod CIDR with host bits set',
    field: 'hosts[3].podCIDR',
    text: edit(workers({ podCIDR: '10.244.1.5/24' })),
  },
  {
    name: 'a worker pod CIDR outside cluster.podCIDR',
    field: 'hosts[3].podCIDR',
    text: edit(workers({ podCIDR: '10.245.0.0/24' })),
  },
  {
    name: 'a worker pod CIDR inside the service CIDR',
    field: 'hosts[3].podCIDR',
    text: edit(workers({ podCIDR: '10.96.0.0/24' })),
  },
  {
    name: 'a worker pod CIDR wider than cluster.podCIDR',
    field: 'hosts[3].podCIDR',
    text: edit(workers({ podCIDR: '10.244.0.0/15' })),
  },
  {
    name: 'two workers with overlapping pod CIDRs',
    field: 'hosts[4].podCIDR',
    text: edit(workers({ podCIDR: '10.244.4.0/24' }, { podCIDR: '10.244.4.128/25' })),
  },
  {
    name: 'more workers than node ranges in cluster.podCIDR',
    field: 'hosts[4].podCIDR',
    text: edit((d) => {
      d.cluster.podCIDR = '10.244.0.0/24';
      workers({}, {})(d);
    }),
  },
];

/** Adds worker hosts w-3, w-4... after the three control-plane hosts of `base`, with the given fields. */
function workers(...extras: Doc[]): (d: Doc) => void {
  return (d) => {
    extras.forEach((x, i) =>
      d.hosts.push({
        name: `w-${i + 3}`,
        address: `198.51.100.${30 + i}`,
        roles: ['worker'],
        ...x,
      }),
    );
  };
}

/** Every path under dir with its size and mtime: any write shows up as a difference. */
function snapshot(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .sort()
    .map((p) => {
      const st = statSync(join(dir, p));
      return `${p} ${st.size} ${st.mtimeMs}`;
    });
}

describe('worker pod CIDRs', () => {
  const podOf = (text: string) =>
    Object.fromEntries(parseInventory(text).hosts.map((h) => [h.name, h.podCidr?.text]));
  it('derives one node range per worker, in host order, and none for other hosts', () => {
    expect(podOf(edit(workers({}, {})))).toEqual({
      'cp-0': undefined,
      'cp-1': undefined,
      'cp-2': undefined,
      'w-3': '10.244.0.0/24',
      'w-4': '10.244.1.0/24',
    });
    expect(parseInventory(edit(workers({}))).workerHosts.map((h) => h.name)).toEqual(['w-3']);
    expect(parseInventory(base).workerHosts).toEqual([]);
  });
  it('keeps given ranges and derives the others around them', () => {
    expect(
      podOf(edit(workers({ podCIDR: '10.244.0.0/24' }, {}, { podCIDR: '10.244.2.0/23' }))),
    ).toMatchObject({ 'w-3': '10.244.0.0/24', 'w-4': '10.244.1.0/24', 'w-5': '10.244.2.0/23' });
    expect(podOf(edit(workers({}, { podCIDR: '10.244.0.0/24' })))).toMatchObject({
      'w-3': '10.244.1.0/24',
      'w-4': '10.244.0.0/24',
    });
  });
  it("sizes derived ranges by the controller-manager's node mask", () => {
    expect(
      podOf(
        edit((d) => {
          extra('kube-controller-manager', { 'node-cidr-mask-size': '26' })(d);
          workers({}, {})(d);
        }),
      ),
    ).toMatchObject({ 'w-3': '10.244.0.0/26', 'w-4': '10.244.0.64/26' });
  });
  it('a host with every role is a worker too', () => {
    const inv = parseInventory(
      edit((d) => {
        d.hosts[0].roles = ['etcd', 'control-plane', 'worker'];
      }),
    );
    expect(inv.hosts[0]).toMatchObject({ isEtcd: true, isControlPlane: true, isWorker: true });
    expect(inv.hosts[0]!.podCidr?.text).toBe('10.244.0.0/24');
  });
});

describe('inventory values match what the components accept', () => {
  it('accepts the values the components accept', () => {
    const inv = parseInventory(
      edit((d) => {
        d.cluster.serviceCIDR = '10.96.0.0/28';
        d.cluster.podCIDR = '10.244.0.0/24';
        d.cluster.dnsDomain = 'k8s.example.internal';
        d.cluster.apiServerEndpoint = 'api.example.com:443';
        d.cluster.extraSANs = ['*.api.example.com', '203.0.113.7', '2001:db8::1', 'kube'];
        d.cluster.certValidity = { leafDays: 3650, caDays: 3650 };
        d.cluster.extraArgs = {
          'kube-apiserver': {
            v: '2',
            'max-requests-inflight': '0x100',
            'audit-log-path': '/var/log/kubernetes/audit.log',
          },
          'kube-controller-manager': {
            'node-monitor-grace-period': '1m30s',
            'node-cidr-mask-size': '26',
            'concurrent-deployment-syncs': '+5',
          },
          'kube-scheduler': { 'leader-elect': 'True', 'bind-address': '0.0.0.0' },
          etcd: {
            'election-timeout': '1000',
            'log-level': 'debug',
            'quota-backend-bytes': '8589934592',
          },
        };
      }),
    );
    expect(inv.serviceIp).toBe('10.96.0.1');
    // With node ranges turned off, the pod CIDR need not hold one.
    expect(
      parseInventory(
        edit((d) => {
          d.cluster.podCIDR = '10.244.0.0/26';
          extra('kube-controller-manager', { 'allocate-node-cidrs': 'false' })(d);
        }),
      ).podCidr.bits,
    ).toBe(26);
  });

  it('each malformed value: exit 2, one line naming the field, nothing written', async () => {
    const dir = tempDir();
    const state = join(dir, 'state');
    mkdirSync(state);
    writeFileSync(join(state, 'sentinel'), 'untouched\n');
    const before = snapshot(state);
    const files = MALFORMED.map((c, i) => {
      const f = join(dir, `bad-${i}.yaml`);
      writeFileSync(f, c.text);
      return f;
    });
    const results = await inBatches(files, 2, (f) =>
      hardwireAsync(['render', '--inventory', f, '--state-dir', state]),
    );
    const wrong = MALFORMED.flatMap((c, i) => {
      const r = results[i]!;
      const lines = r.stderr.trim().split('\n');
      const ok =
        r.code === 2 &&
        lines.length === 1 &&
        lines[0]!.startsWith(`error: ${c.field}: `) &&
        r.stdout === '';
      return ok
        ? []
        : [
            `${c.name}: expected exit 2 and "error: ${c.field}: ...", got exit ${r.code}: ${r.stderr.trim().slice(0, 300)}`,
          ];
    });
    expect(wrong).toEqual([]);
    expect(snapshot(state)).toEqual(before);
    expect(readdirSync(dir).filter((f) => !f.startsWith('bad-'))).toEqual(['state']);
  }, 300_000);
});
