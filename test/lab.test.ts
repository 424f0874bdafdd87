// The lab for real: root + systemd-nspawn, booted containers, SSH through the transport. Never skipped.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadInventory } from '../core/inventory/load.ts';
import { InputError } from '../lib/errors.ts';
import {
  labCut,
  labDown,
  labHeal,
  labStart,
  labStatus,
  labStop,
  labUp,
  type LabInfo,
} from '../harness/lab/index.ts';
import { collidingRoutes, labPlan } from '../harness/lab/plan.ts';
import { mirrorFromSources } from '../harness/lab/rootfs.ts';
import type { LabState } from '../harness/lab/state.ts';
import { connect } from '../core/transport/dial.ts';
import type { Session, SshTarget } from '../core/transport/session.ts';
import { generateEd25519 } from '../core/transport/keygen.ts';
import { hardwire } from './helpers/cli.ts';
import { tempDir } from './helpers/tmp.ts';
import { retry } from '../lib/retry.ts';
import { stepErrorOf } from './helpers/step-error.ts';

// A fixed name and state dir: a crashed earlier run is cleaned by the labDown in beforeAll.
const NAME = 'hwtest-lab';
const stateDir = join(tmpdir(), 'hardwire-lab-test');
const opts = { name: NAME, stateDir };

describe('lab plan (pure)', () => {
  it('derives stable, valid names and addresses outside reserved ranges', () => {
    const a = labPlan('lab', 3, '/s');
    expect(labPlan('lab', 3, '/s')).toEqual(a);
    expect(a.subnet.text).toMatch(/^10\.213\.\d+\.0\/24$/);
    expect(a.hosts.map((h) => h.name)).toEqual(['node1', 'node2', 'node3']);
    for (const n of [a.bridge, ...a.hosts.map((h) => h.veth)])
      expect(n.length).toBeLessThanOrEqual(15);
    expect(labPlan('other', 1, '/s').bridge).not.toBe(a.bridge);
    expect(() => labPlan('Bad_Name', 1)).toThrow(InputError);
    expect(() => labPlan('lab', 0)).toThrow(/--hosts/);
  });

  it('finds routes that collide with the lab subnet, but not its own bridge', () => {
    const p = labPlan('lab', 1, '/s');
    const net = p.subnet.text;
    expect(
      collidingRoutes(
        [
          { dst: 'default', dev: 'eth0' },
          { dst: '192.0.2.0/24', dev: 'eth0' },
        ],
        p,
      ),
    ).toEqual([]);
    expect(collidingRoutes([{ dst: net, dev: p.bridge }], p)).toEqual([]);
    expect(collidingRoutes([{ dst: net, dev: 'br9' }], p)).toEqual([`${net} dev br9`]);
    expect(collidingRoutes([{ dst: '10.213.0.0/16', dev: 'vpn0' }], p)).toHaveLength(1);
    // The lab range's own unreachable route (lab/route.ts) is not a collision; any other route on it is.
    expect(collidingRoutes([{ type: 'unreachable', dst: '10.213.0.0/16' }], p)).toEqual([]);
    expect(collidingRoutes([{ type: 'blackhole', dst: '10.213.0.0/16' }], p)).toHaveLength(1);
  });

  it('reads the apt mirror from one-line and deb822 sources', () => {
    expect(mirrorFromSources('deb http://m.example/debian/ bookworm main\n')).toBe(
      'http://m.example/debian',
    );
    expect(
      mirrorFromSources(
        'Types: deb\nURIs: http://d.example/debian-security\nSuites: bookworm-security\n\nTypes: deb\nURIs: http://d.example/debian\nSuites: bookworm bookworm-updates\n',
      ),
    ).toBe('http://d.example/debian');
    expect(mirrorFromSources('deb http://x/ubuntu jammy main')).toBeUndefined();
  });
});

describe('lab (root, systemd-nspawn)', () => {
  let info: LabInfo;
  let state: LabState;
  const sessions: Session[] = [];
  const hostOf = (name: string) =>
    loadInventory(info.inventory).hosts.find((h) => h.name === name)!;
  const open = async (name: string, extra: Partial<Parameters<typeof connect>[1]> = {}) => {
    const s = await connect(hostOf(name), {
      knownHostsFile: info.knownHosts,
      timeoutMs: 5000,
      ...extra,
    });
    sessions.push(s);
    return s;
  };

  beforeAll(async () => {
    await labDown(opts);
    info = await labUp({ ...opts, hosts: 2 });
    state = JSON.parse(readFileSync(join(info.dir, 'state.json'), 'utf8')) as LabState;
  }, 600_000);

  afterAll(async () => {
    for (const s of sessions) await s.close().catch(() => {});
    await labDown(opts).catch(() => {});
  }, 120_000);

  it('writes a valid hardwire/v1 inventory with the lab key and known_hosts', () => {
    expect(info.hosts.map((h) => [h.name, h.ssh])).toEqual([
      ['node1', true],
      ['node2', true],
    ]);
    const inv = loadInventory(info.inventory);
    expect(inv.cluster.name).toBe(NAME);
    expect(inv.hosts.map((h) => h.address)).toEqual(info.hosts.map((h) => h.address));
    expect(inv.knownHostsFile).toBe(info.knownHosts);
    for (const h of inv.hosts) expect(h.ssh.identityFile).toBe(info.identityFile);
    expect(statSync(info.identityFile).mode & 0o777).toBe(0o600);
    for (const h of inv.hosts) {
      expect(h.address.startsWith('192.0.2.')).toBe(false);
      expect(inv.serviceCidr.text).toBe('10.96.0.0/12');
    }
  });

  it('SSHes into each host with the pinned host keys; each host has its own identity', async () => {
    const seen = new Set<string>();
    for (const h of info.hosts) {
      const s = await open(h.name);
      const r = await s.exec([
        'sh',
        '-c',
        'hostname; cat /etc/machine-id; cat /etc/ssh/ssh_host_ed25519_key.pub',
      ]);
      const [hostname, machineId, hostKey] = r.stdout.trim().split('\n');
      expect(hostname).toBe(h.name);
      seen.add(machineId!);
      seen.add(hostKey!);
      const hosts = (await s.readFile('/etc/hosts')).toString();
      expect(hosts).toMatch(/^127\.0\.0\.1\s+localhost$/m);
      for (const o of info.hosts) expect(hosts).toContain(`${o.address}\t${o.name}`);
      // Only lab addresses are reachable: no default route.
      expect((await s.exec(['ip', 'route', 'show', 'default'])).stdout.trim()).toBe('');
    }
    expect(seen.size).toBe(2 * info.hosts.length);
  }, 60_000);

  it('runs a real systemd unit and reads its state back', async () => {
    const s = await open('node1');
    const unit = [
      '[Unit]',
      'Description=hardwire lab test',
      '[Service]',
      'Type=oneshot',
      'RemainAfterExit=yes',
      "ExecStart=/bin/sh -c 'echo started-by-systemd > /run/hw-lab-test'",
      '[Install]',
      'WantedBy=multi-user.target',
      '',
    ].join('\n');
    await s.writeFileAtomic('/etc/systemd/system/hw-lab-test.service', unit, {
      mode: 0o644,
      owner: 'root:root',
    });
    await s.exec(['systemctl', 'daemon-reload']);
    await s.exec(['systemctl', 'enable', '--now', 'hw-lab-test.service']);
    const show = await s.exec([
      'systemctl',
      'show',
      '-p',
      'ActiveState',
      '-p',
      'SubState',
      '-p',
      'UnitFileState',
      'hw-lab-test.service',
    ]);
    expect(show.stdout).toContain('ActiveState=active');
    expect(show.stdout).toContain('SubState=exited');
    expect(show.stdout).toContain('UnitFileState=enabled');
    expect((await s.readFile('/run/hw-lab-test')).toString()).toBe('started-by-systemd\n');
    const journal = await s.exec(['journalctl', '-u', 'hw-lab-test.service', '--no-pager']);
    expect(journal.stdout).toMatch(/hardwire lab test/);
    const failing = await s.exec(['systemctl', 'is-active', 'no-such-unit.service'], {
      allowFail: true,
    });
    expect(failing.code).not.toBe(0);
    await expect(s.exec(['false'])).rejects.toMatchObject({ step: 'remote-exec', host: 'node1' });
  }, 60_000);

  it('quotes argv safely and writes files atomically with mode, owner and hashes', async () => {
    const s = await open('node2');
    const nasty = ["it's", '$(touch /tmp/pwned)', '`id`', 'a b;c', '*', '\n', ''];
    const r = await s.exec(['printf', '%s\\0', ...nasty]);
    expect(r.stdout.split('\0').slice(0, -1)).toEqual(nasty);
    expect((await s.exec(['test', '-e', '/tmp/pwned'], { allowFail: true })).code).not.toBe(0);

    const path = "/etc/hw test/it's secret.key";
    await s.writeFileAtomic(path, Buffer.from([0, 1, 2, 255]), {
      mode: 0o600,
      owner: 'nobody:nogroup',
    });
    const st = await s.exec(['stat', '-c', '%a %U %G', path]);
    expect(st.stdout.trim()).toBe('600 nobody nogroup');
    expect([...(await s.readFile(path))]).toEqual([0, 1, 2, 255]);
    const ls = await s.exec(['ls', '-A', '/etc/hw test']);
    expect(ls.stdout.trim()).toBe("it's secret.key"); // no temp file left behind
    const hashes = await s.sha256Many([path, '/nonexistent', '/etc/hostname']);
    expect(hashes.get(path)).toBe(
      createHash('sha256')
        .update(Buffer.from([0, 1, 2, 255]))
        .digest('hex'),
    );
    expect(hashes.get('/nonexistent')).toBeNull();
    expect(hashes.get('/etc/hostname')).toBe(createHash('sha256').update('node2\n').digest('hex'));
    expect(await s.sha256('/etc/hostname')).toBe(hashes.get('/etc/hostname'));
    expect(await s.sha256('/nonexistent')).toBeNull();
    await expect(s.exec(['sleep', '5'], { timeoutMs: 300 })).rejects.toMatchObject({
      step: 'ssh-exec-timeout',
    });
  }, 60_000);

  it('runs many commands in parallel on one session (more than sshd MaxSessions)', async () => {
    const s = await open('node1');
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => s.exec(['echo', String(i)])),
    );
    expect(results.map((r) => r.stdout.trim())).toEqual(
      Array.from({ length: 30 }, (_, i) => String(i)),
    );
  }, 60_000);

  it('supports become: sudo and proxyJump through another lab host', async () => {
    const node1 = hostOf('node1');
    const sudoSession = await connect(
      { ...node1, ssh: { ...node1.ssh, become: 'sudo' } },
      { knownHostsFile: info.knownHosts },
    );
    sessions.push(sudoSession);
    expect((await sudoSession.exec(['id', '-u'])).stdout.trim()).toBe('0');
    const node2 = hostOf('node2');
    const jumped = await connect(
      { ...node2, ssh: { ...node2.ssh, proxyJump: `root@${node1.address}` } },
      { knownHostsFile: info.knownHosts },
    );
    sessions.push(jumped);
    // The connection to node2 comes from node1's address, proving it went through the jump host.
    const from = await jumped.exec(['sh', '-c', 'echo "$SSH_CONNECTION"']);
    expect(from.stdout.split(' ')[0]).toBe(node1.address);
    expect((await jumped.exec(['hostname'])).stdout.trim()).toBe('node2');
  }, 60_000);

  it('refuses a CHANGED host key, an unknown key (unless accepted), and a wrong client key: distinct errors', async () => {
    const dir = tempDir();
    const [n1, n2] = info.hosts;
    const keyOf = (name: string) =>
      readFileSync(
        join(info.dir, 'hosts', name, 'upper', 'etc', 'ssh', 'ssh_host_ed25519_key.pub'),
        'utf8',
      )
        .split(' ')
        .slice(0, 2)
        .join(' ');
    // node1's address pinned to node2's key.
    const swapped = join(dir, 'known_hosts_swapped');
    writeFileSync(swapped, `# pinned wrongly on purpose\n${n1!.address} ${keyOf(n2!.name)}\n`);
    const changed = await stepErrorOf(
      connect(hostOf('node1'), {
        knownHostsFile: swapped,
        acceptNewHostKeys: true,
        timeoutMs: 5000,
      }),
    );
    expect(changed.step).toBe('ssh-host-key-changed');
    expect(changed.host).toBe('node1');
    expect(changed.message).toContain('CHANGED');
    expect(changed.message).toContain(`${swapped}:2`);

    const empty = join(dir, 'known_hosts_empty');
    writeFileSync(empty, '');
    const unknown = await stepErrorOf(
      connect(hostOf('node1'), { knownHostsFile: empty, timeoutMs: 5000 }),
    );
    expect(unknown.step).toBe('ssh-host-key-unknown');
    const accepted = await connect(hostOf('node1'), {
      knownHostsFile: empty,
      acceptNewHostKeys: true,
      timeoutMs: 5000,
    });
    sessions.push(accepted);
    expect(readFileSync(empty, 'utf8')).toContain(`${n1!.address} ${keyOf('node1')}`);

    const wrongKey = join(dir, 'wrong_key');
    writeFileSync(wrongKey, generateEd25519().private, { mode: 0o600 });
    const node1 = hostOf('node1');
    const auth = await stepErrorOf(
      connect(
        { ...node1, ssh: { ...node1.ssh, identityFile: wrongKey } },
        { knownHostsFile: info.knownHosts, timeoutMs: 5000 },
      ),
    );
    expect(auth.step).toBe('ssh-auth');
    expect(auth.host).toBe('node1');
    expect(new Set([changed.step, unknown.step, auth.step]).size).toBe(3);
  }, 60_000);

  it('ssh.address: audit reaches node1 on a second address, its key pinned there; sshd logs that address alone', async () => {
    const node1 = hostOf('node1');
    // A free address on the lab's /24 (hosts are .11 up, the bridge .1), on node1's one interface.
    const second = node1.address.replace(/\.\d+$/, '.200');
    const dropIn = '/etc/ssh/sshd_config.d/00-hwtest-verbose.conf';
    // Read through node1's cluster address, on a session opened before the cursor below.
    const s = await open('node1');
    const sh = async (script: string) => (await s.exec(['sh', '-c', script])).stdout.trim();
    // --sync first: journald has written what it was sent.
    const journalCursor = async () =>
      /^__CURSOR=(.+)$/m.exec(
        await sh('journalctl --sync && journalctl -n 1 -o export --no-pager'),
      )?.[1] ?? '';
    const dir = tempDir();
    const pinned = join(dir, 'known_hosts');
    const keyLine = readFileSync(info.knownHosts, 'utf8')
      .split('\n')
      .find((l) => l.split(' ')[0]!.split(',').includes(node1.address))!;
    const inv = (knownHosts: string) => {
      const file = join(dir, `inv-${basename(knownHosts)}.yaml`);
      const doc = parse(readFileSync(info.inventory, 'utf8')) as {
        knownHosts?: string;
        hosts: { ssh: Record<string, unknown> }[];
      };
      doc.knownHosts = knownHosts;
      doc.hosts[0]!.ssh = { ...doc.hosts[0]!.ssh, address: second };
      writeFileSync(file, stringify(doc));
      return file;
    };
    try {
      // sshd logs the address a connection arrived on ("Connection from A port P on B port 22") at VERBOSE.
      await s.writeFileAtomic(dropIn, 'LogLevel VERBOSE\n', { mode: 0o644 });
      await s.exec(['ip', 'addr', 'add', `${second}/24`, 'dev', 'host0']);
      const reloadCursor = await journalCursor();
      await s.exec(['systemctl', 'reload', 'ssh']);
      // The reloaded sshd listens again (re-exec on SIGHUP) before anything dials it.
      await retry(
        async () => {
          const log = await sh(
            `journalctl --sync && journalctl -u ssh --after-cursor='${reloadCursor}' -o cat --no-pager`,
          );
          if (!/Server listening on 0\.0\.0\.0 port 22/.test(log))
            throw new Error(`sshd not reloaded: ${log}`);
        },
        { timeoutMs: 20_000, intervalMs: 200 },
      );
      const cursor = await journalCursor();
      expect(cursor, 'journal cursor').not.toBe('');

      // With the lab's known_hosts, which pins node1 under its name and cluster address only, the
      // key node1 presents at the second address is unknown: the pin is looked up where SSH dials.
      const unpinned = hardwire(['audit', '--inventory', inv(info.knownHosts), '--json']);
      expect(unpinned.code, unpinned.stderr).toBe(1);
      const refused = JSON.parse(unpinned.stdout) as { partial: string[] };
      expect(refused.partial).toEqual([
        expect.stringMatching(
          new RegExp(
            `^node1: not reachable over SSH \\(${second.replaceAll('.', '\\.')}\\): host key ssh-ed25519 SHA256:\\S+ of ${second.replaceAll('.', '\\.')}:22 is not in `,
          ),
        ),
      ]);

      // The same key pinned under the second address too: audit reads both hosts.
      writeFileSync(
        pinned,
        `${readFileSync(info.knownHosts, 'utf8')}${second} ${keyLine.split(' ').slice(1).join(' ')}\n`,
      );
      const a = hardwire(['audit', '--inventory', inv(pinned), '--json']);
      expect(a.code, a.stderr).toBe(0);
      const report = JSON.parse(a.stdout) as {
        hosts: { name: string; address: string; reachable: boolean }[];
        partial: string[];
      };
      expect(report.partial).toEqual([]);
      // The report names the cluster address; only SSH used the other.
      expect(report.hosts.map((h) => [h.name, h.address, h.reachable])).toEqual(
        info.hosts.map((h) => [h.name, h.address, true]),
      );

      // node1's sshd, read over the session opened before: every connection since the cursor arrived
      // on the second address (two audits, two connections), from this machine's bridge address.
      const log = (
        await sh(
          `journalctl --sync && journalctl -u ssh --after-cursor='${cursor}' -o cat --no-pager`,
        )
      ).split('\n');
      const arrivals = log.filter((l) => l.startsWith('Connection from '));
      expect(arrivals.length, log.join('\n')).toBe(2);
      for (const l of arrivals)
        expect(l).toMatch(
          new RegExp(
            `^Connection from ${state.bridgeAddress.replaceAll('.', '\\.')} port \\d+ on ${second.replaceAll('.', '\\.')} port 22 `,
          ),
        );
      expect(log.filter((l) => l.startsWith('Accepted publickey for root ')).length).toBe(1);
    } finally {
      await s.exec(['ip', 'addr', 'del', `${second}/24`, 'dev', 'host0'], { allowFail: true });
      await s.exec(['rm', '-f', dropIn]);
      await s.exec(['systemctl', 'reload', 'ssh']);
    }
    // Gone again: node1 has its cluster address alone.
    expect((await sh("ip -4 -o addr show dev host0 | awk '{print $4}'")).split('\n')).toEqual([
      `${node1.address}/${state.prefix}`,
    ]);
  }, 120_000);

  it('cut makes SSH time out with a clear error; heal restores it', async () => {
    await labCut('node2', opts);
    const st = await labStatus(opts);
    expect(st.hosts.find((h) => h.name === 'node2')).toMatchObject({ running: true, ssh: false });
    const t0 = Date.now();
    const err = await stepErrorOf(
      connect(hostOf('node2'), { knownHostsFile: info.knownHosts, timeoutMs: 2000 }),
    );
    expect(err.step).toBe('ssh-connect-timeout');
    expect(err.host).toBe('node2');
    expect(err.message).toMatch(/within 2000 ms/);
    // Generous: without the 2 s timeout a connect to a cut host waits out the kernel's SYN retries
    // (about 2 minutes); under 30 s proves the timeout applied even on a loaded 2-core machine.
    expect(Date.now() - t0).toBeLessThan(30_000);
    // The other host is unaffected.
    expect((await (await open('node1')).exec(['true'])).code).toBe(0);
    await labHeal('node2', opts);
    const s = await open('node2');
    expect((await s.exec(['hostname'])).stdout.trim()).toBe('node2');
  }, 60_000);

  it('stop powers a host off and start boots it with its disk intact', async () => {
    const s = await open('node2');
    await s.writeFileAtomic('/root/persist.txt', 'kept across power cycles\n', { mode: 0o644 });
    await labStop('node2', opts);
    let st = await labStatus(opts);
    expect(st.hosts.find((h) => h.name === 'node2')).toMatchObject({ running: false, ssh: false });
    expect(st.hosts.find((h) => h.name === 'node1')).toMatchObject({ running: true, ssh: true });
    await labStart('node2', opts);
    st = await labStatus(opts);
    expect(st.hosts.find((h) => h.name === 'node2')).toMatchObject({ running: true, ssh: true });
    const again = await open('node2');
    expect((await again.readFile('/root/persist.txt')).toString()).toBe(
      'kept across power cycles\n',
    );
  }, 120_000);

  it('prints the documented JSON from the CLI', () => {
    const env = { HARDWIRE_STATE: stateDir };
    const up = hardwire(['lab', 'up', '--name', NAME, '--json'], { env });
    expect(up.code, up.stderr).toBe(0);
    expect(JSON.parse(up.stdout)).toEqual({
      name: NAME,
      inventory: info.inventory,
      hosts: info.hosts.map(({ name, address }) => ({ name, address, ssh: true })),
    });
    const st = hardwire(['lab', 'status', '--name', NAME, '--json'], { env });
    expect(st.code, st.stderr).toBe(0);
    expect(JSON.parse(st.stdout)).toEqual({
      name: NAME,
      inventory: info.inventory,
      hosts: info.hosts.map(({ name, address }) => ({ name, address, ssh: true, running: true })),
    });
    const bad = hardwire(['lab', 'cut', '--name', NAME, 'node9'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: host: no host "node9"/);
    expect(hardwire(['lab', 'explode'], { env }).code).toBe(2);
    expect(hardwire(['lab', 'up', '--name', 'Bad_Name'], { env }).stderr).toMatch(/--name/);
    const help = hardwire(['lab', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: hardwire lab/);
  }, 60_000);

  it('up again on a healthy lab changes nothing and is quick', async () => {
    // Each host's PID 1 start time (field 22 of /proc/1/stat, clock ticks since this kernel booted),
    // read on the host over SSH: a host that was booted again has a later one.
    const bootedAt = async () => {
      const out: string[] = [];
      for (const h of info.hosts)
        out.push(
          (await (await open(h.name)).exec(['cat', '/proc/1/stat'])).stdout
            .split(') ')[1]!
            .split(' ')[19]!,
        );
      return out;
    };
    const booted = await bootedAt();
    const before = readFileSync(join(info.dir, 'state.json'), 'utf8');
    const t0 = Date.now();
    const again = await labUp(opts);
    // Generous: booting even one host again takes longer than this on any machine; load can stretch the no-op's checks to seconds.
    expect(Date.now() - t0).toBeLessThan(30_000);
    expect(again.inventory).toBe(info.inventory);
    expect(readFileSync(join(info.dir, 'state.json'), 'utf8')).toBe(before);
    expect(await bootedAt(), 'no host was booted again').toEqual(booted);
    await expect(labUp({ ...opts, hosts: 3 })).rejects.toBeInstanceOf(InputError);
  }, 60_000);

  it('down leaves nothing behind', async () => {
    for (const s of sessions.splice(0)) await s.close();
    state = JSON.parse(readFileSync(join(info.dir, 'state.json'), 'utf8')) as LabState;
    const pids = state.hosts
      .flatMap((h) => [h.pid, h.initPid])
      .filter((p): p is number => typeof p === 'number');
    expect(pids.length).toBe(4);
    await labDown(opts);
    for (const pid of pids) {
      // Gone, or at most a zombie awaiting its parent's wait().
      const alive =
        existsSync(`/proc/${pid}`) &&
        !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
      expect(alive, `pid ${pid}`).toBe(false);
    }
    // `ip link show dev X` exits non-zero when X is gone (`ip -o link` prints a veth as `name@peer:`, so a text search for `name:` cannot fail).
    for (const n of [state.bridge, ...state.hosts.map((h) => h.veth)]) {
      const r = spawnSync('ip', ['link', 'show', 'dev', n], { encoding: 'utf8' });
      expect(r.status, `ip link show dev ${n}: ${r.stdout}`).not.toBe(0);
    }
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(info.dir);
    expect(existsSync(info.dir)).toBe(false);
    const routes = execFileSync('ip', ['-4', 'route', 'show']).toString();
    expect(routes).not.toContain(state.subnet);
    expect((await labDown(opts)).existed).toBe(false);
  }, 120_000);
});

// Keeps the SshTarget type honest: an inventory Host is a valid transport target.
const _check: SshTarget | undefined = undefined as
  | ReturnType<typeof loadInventory>['hosts'][number]
  | undefined;
void _check;
