// proxyJump through wire, for real: node2 sits on the lab's inner network, which this machine has no
// route to; node1 (the bastion) is on both networks. The lab's inventory gives node2 its inner address
// and `ssh.proxyJump: root@<node1>`, so `hardwire wire` and `hardwire verify` reach node2 only through
// node1, with each hop's host key pinned. node1 runs etcd and the control plane, node2 etcd (the
// apiserver gate asks each control-plane host from this machine, which cannot reach node2); the two
// etcd members need each other for quorum, so a healthy etcd proves they peer across the bastion.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tcpAttempt } from './helpers/net.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadInventory, type Inventory } from '../core/inventory/load.ts';
import { labDown } from '../harness/lab/index.ts';
import { INNER_SUBNET } from '../harness/lab/plan.ts';
import type { LabState } from '../harness/lab/state.ts';
import { cidrContains } from '../lib/net.ts';
import { etcdctlArgv } from '../core/gates/etcd.ts';
import { connect } from '../core/transport/dial.ts';
import type { Session } from '../core/transport/session.ts';
import { hardwire } from './helpers/cli.ts';
import { tempDir } from './helpers/tmp.ts';
import { stepErrorOf } from './helpers/step-error.ts';

// A fixed name and state dir: a crashed earlier run is cleaned by the labDown in beforeAll.
const NAME = 'hwtest-jump';
const stateDir = join(tmpdir(), 'hardwire-proxyjump-test');
const opts = { name: NAME, stateDir };
const env = { HARDWIRE_STATE: stateDir };
const cliState = join(stateDir, 'state');
const durations: Record<string, number> = {};

async function timed<T>(name: string, fn: () => T | Promise<T>): Promise<T> {
  const t0 = performance.now();
  try {
    return await fn();
  } finally {
    durations[name] = Math.round(performance.now() - t0);
  }
}

function addrInfo(link: string): unknown[] {
  const j = JSON.parse(execFileSync('ip', ['-j', 'addr', 'show', 'dev', link]).toString()) as {
    addr_info?: unknown[];
  }[];
  return j[0]?.addr_info ?? [];
}

describe('proxyJump through wire: an inner host reachable only through a bastion (root, systemd-nspawn)', () => {
  let inv: Inventory;
  let state: LabState;
  let node1: Inventory['hosts'][number];
  let node2: Inventory['hosts'][number];
  const sessions: Session[] = [];
  const open = async (host: Inventory['hosts'][number], knownHostsFile = inv.knownHostsFile!) => {
    const s = await connect(host, { knownHostsFile, timeoutMs: 10_000 });
    sessions.push(s);
    return s;
  };

  beforeAll(async () => {
    await labDown(opts).catch(() => undefined);
    rmSync(stateDir, { recursive: true, force: true });
    const up = await timed('lab up --hosts 2 --inner 1', () =>
      hardwire(['lab', 'up', '--name', NAME, '--hosts', '2', '--inner', '1', '--json'], {
        env,
        timeoutMs: 600_000,
      }),
    );
    expect(up.code, up.stderr).toBe(0);
    const doc = JSON.parse(up.stdout) as {
      inventory: string;
      hosts: { name: string; address: string; ssh: boolean; proxyJump?: string }[];
    };
    inv = loadInventory(doc.inventory);
    [node1, node2] = inv.hosts as [typeof node1, typeof node2];
    state = JSON.parse(readFileSync(join(stateDir, 'lab', NAME, 'state.json'), 'utf8')) as LabState;
    expect(doc.hosts).toEqual([
      { name: 'node1', address: node1.address, ssh: true },
      { name: 'node2', address: node2.address, ssh: true, proxyJump: `root@${node1.address}` },
    ]);
  }, 900_000);

  afterAll(async () => {
    for (const s of sessions) await s.close().catch(() => {});
    await labDown(opts).catch(() => {});
    console.log(`proxyjump test durations (ms): ${JSON.stringify(durations)}`);
  }, 120_000);

  it('the inventory puts node2 at its inner address behind node1, etcd only; known_hosts pins both', () => {
    expect(cidrContains(INNER_SUBNET, node2.address)).toBe(true);
    expect(cidrContains(INNER_SUBNET, node1.address)).toBe(false);
    expect(node2.ssh.proxyJump).toBe(`root@${node1.address}`);
    expect(node1.ssh.proxyJump).toBe('');
    expect(node1.roles).toEqual(['etcd', 'control-plane']);
    expect(node2.roles).toEqual(['etcd']);
    const known = readFileSync(inv.knownHostsFile!, 'utf8');
    for (const h of inv.hosts) {
      const pub = readFileSync(
        join(
          stateDir,
          'lab',
          NAME,
          'hosts',
          h.name,
          'upper',
          'etc',
          'ssh',
          'ssh_host_ed25519_key.pub',
        ),
        'utf8',
      )
        .split(' ')
        .slice(0, 2)
        .join(' ');
      expect(known).toContain(`${h.name},${h.address} ${pub}`);
    }
    // --inner must leave the bastion on the lab network: refused in one line, nothing created.
    const bad = hardwire(
      ['lab', 'up', '--name', 'hwtest-jump-bad', '--hosts', '2', '--inner', '2'],
      { env },
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: --inner: must be a whole number from 0 to 1/);
    expect(existsSync(join(stateDir, 'lab', 'hwtest-jump-bad'))).toBe(false);
  });

  it('this machine cannot reach node2: no address on the inner network here, a direct connection fails at once, an inventory without the jump is refused', async () => {
    const inner = state.inner!;
    // The inner bridge and both host-side veths on it carry no address, IPv4 or IPv6 (not even link-local).
    const ports = (
      JSON.parse(execFileSync('ip', ['-j', 'link', 'show', 'master', inner.bridge]).toString()) as {
        ifname: string;
      }[]
    )
      .map((l) => l.ifname)
      .sort();
    expect(ports).toEqual([state.hosts[0]!.innerLink!.veth, state.hosts[1]!.veth].sort());
    for (const link of [inner.bridge, ...ports]) expect(addrInfo(link), link).toEqual([]);
    const route = spawnSync('ip', ['-4', 'route', 'get', node2.address], { encoding: 'utf8' });
    expect(`${route.stdout}${route.stderr}`).toMatch(/No route to host|unreachable/);
    const attempt = await tcpAttempt(node2.address);
    expect(attempt.result).toBe('EHOSTUNREACH');
    // The errno is the evidence that the kernel refused it here (no SYN left); the bound is only
    // tcpAttempt's own 5 s limit, generous because a loaded 2-core machine can delay the callback by seconds.
    expect(attempt.ms, 'fails here, not after a timeout').toBeLessThan(5000);
    // The transport without the jump fails the same way.
    const t0 = performance.now();
    const direct = await stepErrorOf(
      connect(
        { ...node2, ssh: { ...node2.ssh, proxyJump: '' } },
        { knownHostsFile: inv.knownHostsFile!, timeoutMs: 5000 },
      ),
    );
    expect(direct.step).toBe('ssh-connect'); // not ssh-connect-timeout: refused here, not waited out
    expect(direct.message).toMatch(/EHOSTUNREACH/);
    // Generous: within the 5 s connect timeout (and the step above already says it was not the timeout); load can stretch it to seconds.
    expect(performance.now() - t0).toBeLessThan(5000);
    // An inventory that names node2 without the jump is refused in one line before anything connects.
    const noJump = join(tempDir(), 'no-jump.yaml');
    writeFileSync(noJump, readFileSync(inv.file, 'utf8').replace(/^\s+proxyJump: .*\n/m, ''));
    const refused = hardwire([
      'verify',
      '--inventory',
      noJump,
      '--state-dir',
      join(tempDir(), 'state'),
    ]);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(
          `^error: hosts\\[1\\]\\.address: ${node2.address.replaceAll('.', '\\.')} is on a hardwire lab's inner network`,
        ),
      ),
    ]);
  }, 60_000);

  it('through node1, node2 answers from its inner network; each hop refuses a key other than the pinned one', async () => {
    const s = await open(node2);
    const r = await s.exec([
      'sh',
      '-c',
      'hostname; echo "$SSH_CONNECTION"; ip -4 -o addr show scope global; ip route show default',
    ]);
    const [hostname, conn, ...addrs] = r.stdout.trim().split('\n');
    expect(hostname).toBe('node2');
    // The connection to node2 comes from node1's inner address: it went through the bastion.
    expect(conn!.split(' ')[0]).toBe(state.hosts[0]!.innerLink!.address);
    expect(addrs.map((l) => l.split(/\s+/).slice(1, 4).join(' '))).toEqual([
      `host0 inet ${node2.address}/24`,
    ]); // one interface, no default route

    // Pin node1's key to node2's line, and the other way round: each hop on its own is refused.
    const lines = readFileSync(inv.knownHostsFile!, 'utf8').trim().split('\n');
    const keyOf = (i: number) => lines[i]!.split(' ').slice(1).join(' ');
    const dir = tempDir();
    const wrongInner = join(dir, 'known_hosts_inner');
    writeFileSync(wrongInner, `${lines[0]}\n${lines[1]!.split(' ')[0]} ${keyOf(0)}\n`);
    const inner = await stepErrorOf(open(node2, wrongInner));
    expect(inner.step).toBe('ssh-host-key-changed');
    expect(inner.host).toBe('node2');
    expect(inner.message).toContain(`host key for ${node2.address}:22 has CHANGED`);
    const wrongBastion = join(dir, 'known_hosts_bastion');
    writeFileSync(wrongBastion, `${lines[0]!.split(' ')[0]} ${keyOf(1)}\n${lines[1]}\n`);
    const bastion = await stepErrorOf(open(node2, wrongBastion));
    expect(bastion.step).toBe('ssh-host-key-changed');
    expect(bastion.message).toContain(`host key for ${node1.address}:22 has CHANGED`);
  }, 60_000);

  it('hardwire wire wires both hosts through the jump, and hardwire verify passes', async () => {
    const w = await timed('wire', () =>
      hardwire(['wire', '--inventory', inv.file, '--state-dir', cliState, '--json'], {
        timeoutMs: 900_000,
      }),
    );
    expect(w.code, w.stderr.slice(-3000)).toBe(0);
    const report = JSON.parse(w.stdout) as {
      hosts: {
        name: string;
        address: string;
        components: Record<string, { activeState: string }>;
      }[];
    };
    expect(report.hosts.map((h) => [h.name, h.address])).toEqual([
      ['node1', node1.address],
      ['node2', node2.address],
    ]);
    expect(Object.keys(report.hosts[1]!.components)).toEqual(['etcd']);
    const v = await timed('verify', () =>
      hardwire(['verify', '--inventory', inv.file, '--state-dir', cliState, '--json'], {
        timeoutMs: 600_000,
      }),
    );
    expect(v.code, v.stderr.slice(-3000)).toBe(0);
    const checks = JSON.parse(v.stdout) as {
      ok: boolean;
      gates: { name: string; ok: boolean; detail: string }[];
      smoke: { ok: boolean }[];
    };
    expect(checks.ok).toBe(true);
    expect(checks.gates.find((g) => g.name.startsWith('etcd:'))).toMatchObject({
      ok: true,
      detail: 'node1, node2',
    });
    expect(checks.smoke.length).toBeGreaterThan(0);
  }, 1_500_000);

  it('on node2, through the jump: etcd runs as rendered, at its inner address, peering with node1 across the bastion', async () => {
    const s = await open(node2);
    const show = await s.exec([
      'systemctl',
      'show',
      '-p',
      'ActiveState',
      '-p',
      'SubState',
      '-p',
      'NRestarts',
      '-p',
      'MainPID',
      'etcd.service',
    ]);
    expect(show.stdout).toContain('ActiveState=active');
    expect(show.stdout).toContain('SubState=running');
    expect(show.stdout).toContain('NRestarts=0');
    // The unit on the host is the one wire rendered for node2.
    const rendered = readFileSync(
      join(cliState, NAME, 'hosts', 'node2', 'etc', 'systemd', 'system', 'etcd.service'),
    );
    expect(await s.sha256('/etc/systemd/system/etcd.service')).toBe(
      createHash('sha256').update(rendered).digest('hex'),
    );
    // etcd only: no control-plane unit on the inner host.
    expect(
      (await s.exec(['systemctl', 'cat', 'kube-apiserver.service'], { allowFail: true })).code,
    ).not.toBe(0);
    const pid = /MainPID=(\d+)/.exec(show.stdout)![1]!;
    const cmdline = (await s.readFile(`/proc/${pid}/cmdline`)).toString().split('\0');
    expect(cmdline).toContain(`--initial-advertise-peer-urls=https://${node2.address}:2380`);

    // Asked from node2: both members healthy, node1 reached at its lab address through the bastion's route.
    const health = JSON.parse(
      (await s.exec(etcdctlArgv(inv, 'endpoint', 'health', '-w', 'json'), { timeoutMs: 30_000 }))
        .stdout,
    ) as { endpoint: string; health: boolean }[];
    expect(health.map((e) => [e.endpoint, e.health]).sort()).toEqual(
      [
        [`https://${node1.address}:2379`, true],
        [`https://${node2.address}:2379`, true],
      ].sort(),
    );
    const members = JSON.parse(
      (await s.exec(etcdctlArgv(inv, 'member', 'list', '-w', 'json'), { timeoutMs: 30_000 }))
        .stdout,
    ) as { members: { name: string; peerURLs: string[] }[] };
    expect(members.members.map((m) => [m.name, m.peerURLs]).sort()).toEqual([
      ['node1', [`https://${node1.address}:2380`]],
      ['node2', [`https://${node2.address}:2380`]],
    ]);
    // Both directions on the inner network: node1 dials node2's etcd from its inner address, and node2's raft
    // dials node1's peer port at node1's lab address, through the bastion's route.
    const ss = (await s.exec(['ss', '-Htn', 'state', 'established'])).stdout;
    const re = (ip: string) => ip.replaceAll('.', '\\.');
    expect(ss).toMatch(
      new RegExp(`${re(node2.address)}:2379\\s+${re(state.hosts[0]!.innerLink!.address)}:\\d+`),
    );
    expect(ss).toMatch(new RegExp(`${re(node2.address)}:\\d+\\s+${re(node1.address)}:2380`));
    // On node1, those connections to node2's etcd are kube-apiserver's: the control plane uses the inner member.
    const onNode1 = (
      await (await open(node1)).exec(['ss', '-Htnp', 'state', 'established'])
    ).stdout.split('\n');
    expect(
      onNode1.filter((l) => l.includes(`${node2.address}:2379`) && l.includes('"kube-apiserver"'))
        .length,
    ).toBeGreaterThan(0);
  }, 120_000);

  it('lab ssh reaches node2 through node1 with OpenSSH, both host keys pinned', () => {
    const r = hardwire(
      ['lab', 'ssh', '--name', NAME, 'node2', '--', 'sh', '-c', 'hostname; echo "$SSH_CONNECTION"'],
      { env, timeoutMs: 60_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    const [hostname, conn] = r.stdout.trim().split('\n');
    expect(hostname).toBe('node2');
    expect(conn!.split(' ')[0]).toBe(state.hosts[0]!.innerLink!.address);
  }, 60_000);

  it('lab down removes the inner network with the rest; node2 still fails here at once', async () => {
    for (const s of sessions.splice(0)) await s.close();
    await timed('lab down', () => labDown(opts));
    // `ip link show dev X` exits non-zero when X is gone (`ip -o link` prints a veth as `name@peer:`, so a text search for `name:` cannot fail).
    for (const n of [
      state.bridge,
      state.inner!.bridge,
      state.hosts[0]!.innerLink!.veth,
      ...state.hosts.map((h) => h.veth),
    ]) {
      const r = spawnSync('ip', ['link', 'show', 'dev', n], { encoding: 'utf8' });
      expect(r.status, `ip link show dev ${n}: ${r.stdout}`).not.toBe(0);
    }
    expect(existsSync(join(stateDir, 'lab', NAME))).toBe(false);
    expect((await tcpAttempt(node2.address)).result).toBe('EHOSTUNREACH');
  }, 120_000);
});
