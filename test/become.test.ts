// Wire over a non-root login with `become: sudo`, end to end, and prove on the host (as root, over a
// separate session) that the login really was not root and that what wire installed is root's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { hardwire } from './helpers/cli.ts';
import { testLab, remote, type TestLab } from './helpers/lab.ts';
import { LAB_SUDO_USER } from '../harness/lab/prepare.ts';
import { connect } from '../core/transport/index.ts';

let lab: TestLab;
let inv: string;
let state: string;

beforeAll(async () => {
  lab = await testLab('becometest', 1);
  state = join(lab.stateDir, 'state');
  const doc = parse(readFileSync(lab.info.inventory, 'utf8')) as {
    hosts: { ssh: Record<string, unknown> }[];
  };
  for (const h of doc.hosts) h.ssh = { ...h.ssh, user: LAB_SUDO_USER, become: 'sudo' };
  inv = join(lab.stateDir, 'inv-sudo.yaml');
  writeFileSync(inv, stringify(doc));
});

afterAll(async () => {
  await lab?.down();
});

describe('become: sudo', () => {
  it('the lab user is not root without sudo', async () => {
    const h = lab.info.hosts[0]!;
    const doc = parse(readFileSync(lab.info.inventory, 'utf8')) as {
      hosts: { ssh: { identityFile: string } }[];
    };
    const s = await connect(
      {
        name: h.name,
        address: h.address,
        ssh: {
          user: LAB_SUDO_USER,
          port: 22,
          identityFile: doc.hosts[0]!.ssh.identityFile,
          proxyJump: '',
          become: '',
        },
      },
      { knownHostsFile: lab.info.knownHosts },
    );
    expect((await s.exec(['id', '-u'])).stdout.trim()).not.toBe('0');
    expect((await s.exec(['touch', '/etc/kubernetes-probe'], { allowFail: true })).code).not.toBe(
      0,
    );
    await s.close();
  });

  it("wires and verifies over that user; files are root's and units run as their models say", async () => {
    // Read as root over the lab's own root session, opened before the cursor so that its login is
    // not among the ones after it, and not through the code under test.
    const s = await lab.ssh(lab.info.hosts[0]!.name);
    // A journal cursor before wire: only what wire and verify did on the host comes after it (an
    // earlier test logged in as the lab user too, so the whole journal proves nothing).
    // --sync first: journald has written what it was sent, this session's own login included.
    const cursor = /^__CURSOR=(.+)$/m.exec(
      await remote(s, ['sh', '-c', 'journalctl --sync && journalctl -n 1 -o export --no-pager']),
    )?.[1];
    expect(cursor, 'journal cursor').toBeDefined();
    const w = hardwire(['wire', '--inventory', inv, '--state-dir', state], { timeoutMs: 900_000 });
    expect(w.code, w.stderr.slice(-3000)).toBe(0);
    const v = hardwire(['verify', '--inventory', inv, '--state-dir', state]);
    expect(v.code, v.stderr.slice(-2000)).toBe(0);

    // wire's and verify's sessions logged in as the lab user, and sshd accepted no root login after the cursor.
    const since = ['journalctl', `--after-cursor=${cursor}`, '--no-pager', '-o', 'cat'];
    const accepted = (await remote(s, [...since, '-u', 'ssh']))
      .split('\n')
      .filter((l) => l.startsWith('Accepted '));
    expect(accepted.length, 'logins after the cursor').toBeGreaterThan(0);
    expect(
      accepted.filter((l) => !l.startsWith(`Accepted publickey for ${LAB_SUDO_USER} `)),
      'logins after the cursor not as the lab user',
    ).toEqual([]);
    // And they became root through sudo: sudo's own lines for that user, after the cursor.
    const sudo = (await remote(s, [...since, 'SYSLOG_IDENTIFIER=sudo']))
      .split('\n')
      .filter((l) => l.includes('COMMAND='));
    expect(sudo.length, 'sudo commands after the cursor').toBeGreaterThan(0);
    expect(
      sudo.filter((l) => !l.trimStart().startsWith(`${LAB_SUDO_USER} :`) || !/USER=root ;/.test(l)),
      'sudo lines not by the lab user to root',
    ).toEqual([]);
    const owners = await remote(s, [
      'sh',
      '-c',
      'find /etc/kubernetes /usr/local/bin /etc/systemd/system/etcd.service /etc/systemd/system/kube-*.service /var/lib/hardwire -xdev -type f -printf "%u:%g %m %p\\n" | sort -k3',
    ]);
    const lines = owners.split('\n');
    expect(lines.length).toBeGreaterThan(20);
    for (const l of lines) {
      // etcd's own files may belong to the etcd user where its model says so; nothing belongs to the login user.
      expect(l, l).not.toMatch(new RegExp(`^${LAB_SUDO_USER}:`));
      expect(l, l).toMatch(/^(root:root|etcd:etcd) /);
    }
    for (const l of lines.filter((x) => x.endsWith('.key'))) expect(l, l).toMatch(/ 600 /);
    // Each unit runs as the user its unit file names (root when it names none).
    for (const unit of ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler']) {
      const configured =
        (await remote(s, ['systemctl', 'show', '-p', 'User', '--value', `${unit}.service`])) ||
        'root';
      const pid = await remote(s, [
        'systemctl',
        'show',
        '-p',
        'MainPID',
        '--value',
        `${unit}.service`,
      ]);
      expect(Number(pid), unit).toBeGreaterThan(0);
      expect(await remote(s, ['ps', '-o', 'user=', '-p', pid]), unit).toBe(configured);
    }
    await s.close();
  }, 900_000);
});
