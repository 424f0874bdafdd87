// Preflight's checks and what the node models render from a host's reading, without a host: a
// reading as a lab container gives it and as a cgroup v2 VM gives it, each made wrong one way.
// (test/vm.test.ts reads real hosts made wrong.)
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseInventory } from '../core/inventory/load.ts';
import { checkHost, failureLines } from '../core/preflight/checks.ts';
import { parseReading, type HostReading } from '../core/preflight/read.ts';
import { profileOf, saveProfile } from '../core/preflight/profile.ts';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hardwire } from './helpers/cli.ts';
import { tempDir } from './helpers/tmp.ts';
import { modelsFor } from '../core/components/models/index.ts';

const inv = parseInventory(`apiVersion: hardwire/v1
kind: Inventory
cluster: {name: pf}
hosts:
  - {name: cp, address: 198.51.100.10, roles: [etcd, control-plane, worker]}
  - {name: vm, address: 198.51.100.20, roles: [worker]}
`);
const [cp, vm] = inv.hosts as [(typeof inv.hosts)[0], (typeof inv.hosts)[0]];

/** The script's output on a lab container of this machine (read there on 2026-12-07), and on a TCG VM. */
const CONTAINER = `os\tDebian GNU/Linux 12 (bookworm)
kernel\t6.18.44-fc-v1300
arch\tx86_64
cgroupfs\ttmpfs
controllers\t
v1controllers\tcpuset cpu cpuacct blkio memory devices freezer net_cls perf_event net_prio hugetlb pids
swaps\t0
ip_forward\t0
sysctl_net\trw
bridge_nf\t1
modules\toverlay br_netfilter
conntrack\tro
virt\tsystemd-nspawn
pid1\tsystemd
disk\t62966848 264212084
memkb\t24683772
cpus\t2
listen\t0.0.0.0:22 users:(("sshd",pid=54,fd=3))
now\t1000.0
`;
const VM = CONTAINER.replace('cgroupfs\ttmpfs', 'cgroupfs\tcgroup2fs')
  .replace('controllers\t\n', 'controllers\tcpuset cpu io memory hugetlb pids rdma misc\n')
  .replace('bridge_nf\t1', 'bridge_nf\t')
  .replace('modules\toverlay br_netfilter', 'modules\toverlay')
  .replace('conntrack\tro', 'conntrack\trw')
  .replace('virt\tsystemd-nspawn', 'virt\tqemu')
  .replace('disk\t62966848 264212084', 'disk\t7000000 8000000');

const read = (text: string, host = 'vm'): HostReading => parseReading(host, text, 1000);
const fails = (host: typeof vm, text: string) =>
  failureLines(checkHost(host, read(text, host.name)));

describe('preflight checks', () => {
  it('pass on a lab container and on a fresh VM; what wire sets is reported, not failed', () => {
    expect(fails(cp, CONTAINER)).toEqual([]);
    expect(fails(vm, VM)).toEqual([]);
    const sets = checkHost(vm, read(VM)).filter((c) => c.wireSets);
    expect(sets.map((c) => c.check)).toEqual(['ip_forward', 'bridge-nf-call-iptables']);
  });

  it('each wrong host is one line naming the host, what is wrong and the fix', () => {
    const cases: [string, string, RegExp][] = [
      ['swap', VM.replace('swaps\t0', 'swaps\t1'), /^vm: swap: swap is on .*swapoff -a/],
      [
        'port',
        `${VM}listen\t*:10250 users:(("socat",pid=9,fd=3))\n`,
        /^vm: port-10250: port 10250 is in use by socat, and kubelet binds it/,
      ],
      ['clock', VM.replace('now\t1000.0', 'now\t1600.0'), /^vm: clock: the clock is 600 s ahead/],
      [
        'disk',
        VM.replace('disk\t7000000 8000000', 'disk\t1000000 8000000'),
        /^vm: disk: 1\.0 GiB free/,
      ],
      [
        'ip_forward',
        CONTAINER.replace('sysctl_net\trw', 'sysctl_net\tro'),
        /^vm: ip_forward: .*read-only here so wire cannot set it/,
      ],
      [
        'cgroups',
        VM.replace(' memory ', ' '),
        /^vm: cgroups: cgroup v2 lacks the memory controller/,
      ],
      [
        'arch',
        VM.replace('arch\tx86_64', 'arch\triscv64'),
        /^vm: arch: riscv64: hardwire builds for x86_64 and aarch64 only/,
      ],
      ['commands', `${VM}missing\tnft\n`, /^vm: commands: nft not found in PATH/],
    ];
    for (const [what, text, line] of cases) {
      const got = fails(vm, text);
      expect(got, what).toHaveLength(1);
      expect(got[0], what).toMatch(line);
    }
  });

  it('an aarch64 host passes, and its profile asks for arm64 binaries', () => {
    const arm = VM.replace('arch\tx86_64', 'arch\taarch64');
    expect(fails(vm, arm)).toEqual([]);
    expect(profileOf(read(arm)).arch).toBe('arm64');
    expect(profileOf(read(VM)).arch).toBe('amd64');
  });

  it("a component's own process on its port is not a failure (a second wire)", () => {
    expect(fails(vm, `${VM}listen\t*:10250 users:(("kubelet",pid=9,fd=3))\n`)).toEqual([]);
    // kube-controller-manager's comm is cut to 15 characters.
    expect(
      fails(cp, `${CONTAINER}listen\t*:10257 users:(("kube-controller",pid=9,fd=3))\n`),
    ).toEqual([]);
  });
});

describe('the node models follow the reading', () => {
  const kubelet = (text: string) => {
    const m = modelsFor({ inv, host: vm, node: profileOf(read(text)) });
    const file = (c: string, path: string) =>
      m.find((x) => x.component === c)!.files!.find((f) => f.path === path)?.content;
    return {
      config: parse(file('kubelet', '/var/lib/kubelet/config.yaml')!) as Record<string, unknown>,
      proxy: parse(file('kube-proxy', '/var/lib/kube-proxy/config.conf')!) as Record<
        string,
        unknown
      >,
      toml: file('containerd', '/etc/containerd/config.toml')!,
      modules: file('containerd', '/etc/modules-load.d/hardwire.conf'),
      sysctl: file('containerd', '/etc/sysctl.d/90-hardwire.conf'),
      pre: m
        .find((x) => x.component === 'containerd')!
        .directives!.filter((d) => d.key === 'ExecStartPre')
        .map((d) => d.value),
    };
  };

  it('cgroup v2 VM: the systemd driver in the kubelet and runc, modules and sysctls set, conntrack left to kube-proxy', () => {
    const v = kubelet(VM);
    expect(v.config.cgroupDriver).toBe('systemd');
    expect(v.config).not.toHaveProperty('failCgroupV1');
    expect(v.config).not.toHaveProperty('failSwapOn');
    expect(v.toml).toMatch(/^\s*SystemdCgroup = true$/m);
    expect(v.proxy).not.toHaveProperty('conntrack');
    expect(v.modules).toMatch(/^overlay\n(.|\n)*^br_netfilter$/m);
    expect(v.sysctl).toMatch(/^net\.ipv4\.ip_forward = 1$/m);
    expect(v.sysctl).toMatch(/^net\.bridge\.bridge-nf-call-iptables = 1$/m);
    expect(v.pre).toContain('/usr/sbin/modprobe -a overlay br_netfilter');
    expect(v.pre).toContain('/usr/sbin/sysctl -q -p /etc/sysctl.d/90-hardwire.conf');
  });

  it('lab container (cgroup v1): cgroupfs, v1 allowed, no module loading, conntrack untouched', () => {
    const c = kubelet(CONTAINER);
    expect(c.config.cgroupDriver).toBe('cgroupfs');
    expect(c.config.failCgroupV1).toBe(false);
    expect(c.config).not.toHaveProperty('failSwapOn');
    expect(c.toml).toMatch(/^\s*SystemdCgroup = false$/m);
    expect(c.proxy.conntrack).toEqual({
      maxPerCore: 0,
      tcpEstablishedTimeout: '0s',
      tcpCloseWaitTimeout: '0s',
    });
    expect(c.modules).toBeUndefined();
    expect(c.sysctl).toMatch(/^net\.ipv4\.ip_forward = 1$/m);
    expect(c.pre.some((p) => p.includes('modprobe'))).toBe(false);
  });
});

describe('an offline render follows what preflight last read', () => {
  it('a worker read as a cgroup v2 VM renders the systemd driver; one never read renders the container path, with a warning', () => {
    const dir = tempDir();
    const file = join(dir, 'inv.yaml');
    writeFileSync(
      file,
      `apiVersion: hardwire/v1
kind: Inventory
cluster: {name: pf}
hosts:
  - {name: cp, address: 198.51.100.10, roles: [etcd, control-plane, worker]}
  - {name: vm, address: 198.51.100.20, roles: [worker]}
`,
    );
    saveProfile(join(dir, 'state', 'pf'), 'vm', profileOf(read(VM)));
    const r = hardwire(['render', '--inventory', file, '--state-dir', join(dir, 'state')]);
    expect(r.code, r.stderr).toBe(0);
    const driver = (h: string) =>
      (
        parse(
          readFileSync(join(dir, 'state', 'pf', 'hosts', h, 'var/lib/kubelet/config.yaml'), 'utf8'),
        ) as { cgroupDriver: string }
      ).cgroupDriver;
    expect(driver('vm')).toBe('systemd');
    expect(driver('cp')).toBe('cgroupfs');
    expect(r.stderr).toMatch(/cp: preflight has not read it yet/);
    expect(r.stderr).not.toMatch(/vm: preflight has not read it yet/);
  });
});
