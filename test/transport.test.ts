// Transport pieces that need no host: argv quoting (checked against a real sh) and known_hosts pinning.
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../lib/errors.ts';
import {
  appendKnownHost,
  checkHostKey,
  entryMatchesHost,
  formatKnownHost,
  knownHostName,
  parseKnownHosts,
  readKnownHostsFile,
} from '../core/transport/known-hosts.ts';
import {
  encodeEd25519,
  generateEd25519,
  isWellFormedEd25519Public,
} from '../core/transport/keygen.ts';
import { shJoin, shQuote } from '../lib/quote.ts';
import { parseProxyJump } from '../core/transport/dial.ts';
import { isReadOnlyCommand } from '../core/transport/read-only.ts';
import { KUBE_GET, PROC_DUMP } from '../core/transport/read-scripts.ts';
import { tempDir } from './helpers/tmp.ts';

/** Runs the quoted command line through a real POSIX shell and returns the argv it saw. */
function roundTrip(args: string[]): string[] {
  const out = execFileSync('sh', ['-c', `printf '%s\\0' ${shJoin(args)}`]);
  return out.toString('utf8').split('\0').slice(0, -1);
}

describe('shQuote', () => {
  const nasty = [
    '',
    ' ',
    'plain',
    'a b',
    "it's",
    "''",
    '"double"',
    '$(id)',
    '`id`',
    '$HOME',
    '${x:-y}',
    'a;b',
    'a&&b',
    'a|b',
    '>out',
    '<in',
    '*',
    '?',
    '[a]',
    '~',
    '~root',
    '#comment',
    '!',
    'new\nline',
    'tab\there',
    '\\',
    "\\'",
    '-n',
    '--',
    'a=b',
    '%s',
    'ünïcödé',
    '日本',
    "x'; rm -rf / #",
    '\t',
    '{a,b}',
  ];

  it('round-trips every argument byte for byte through sh', () => {
    expect(roundTrip(nasty)).toEqual(nasty);
  });

  it('leaves safe words bare and quotes everything else', () => {
    expect(shQuote('systemctl')).toBe('systemctl');
    expect(shQuote('/etc/kubernetes/pki/ca.crt')).toBe('/etc/kubernetes/pki/ca.crt');
    expect(shQuote('--data-dir=/var/lib/etcd')).toBe('--data-dir=/var/lib/etcd');
    expect(shQuote('')).toBe("''");
    expect(shQuote('a b')).toBe("'a b'");
    expect(shQuote("it's")).toBe("'it'\\''s'");
    expect(shQuote('~')).toBe("'~'");
  });

  it('refuses NUL bytes and empty argv', () => {
    expect(() => shQuote('a\0b')).toThrow(/NUL/);
    expect(() => shJoin([])).toThrow(/empty/);
  });
});

// Two real keys; the hashed lines below were made by `ssh-keygen -H` from "10.1.2.3" and "[10.1.2.4]:2222".
const KEY_A = 'AAAAC3NzaC1lZDI1NTE5AAAAIMEPWapqk6c3W4D3Ugv1eMR3y3nSXdw/xK6JBp9Os9NT';
const KEY_B = 'AAAAC3NzaC1lZDI1NTE5AAAAIDIPj15z3irLD+lH5mTbd6MeBShhAIGbg1U4XQ3cxybQ';
const blobA = Buffer.from(KEY_A, 'base64');
const blobB = Buffer.from(KEY_B, 'base64');
const HASHED = [
  `|1|1nd508rL1zjYA78Zrh5oIXOEfhU=|ek1brHlhquHLeYhWSmQj8FpuSYo= ssh-ed25519 ${KEY_A}`,
  `|1|G67jxSC5h4ZDkoPQvmeLIjKCegs=|MT7PfnXcciw7ziq+jnWTYQzC8Oc= ssh-ed25519 ${KEY_A}`,
].join('\n');

describe('known_hosts', () => {
  it('parses plain lines with comments, markers and junk', () => {
    const text = [
      '# comment',
      '',
      `node1,10.0.0.1 ssh-ed25519 ${KEY_A} root@node1`,
      '@cert-authority *.example ssh-ed25519 ' + KEY_B,
      `@revoked bad.example ssh-ed25519 ${KEY_B}`,
      'broken line',
      `mismatch ssh-rsa ${KEY_A}`, // blob says ed25519: corrupt, skipped
      '@weird x ssh-ed25519 ' + KEY_A,
    ].join('\n');
    const e = parseKnownHosts(text);
    expect(e.map((x) => [x.line, x.marker, x.hosts, x.keyType])).toEqual([
      [3, '', 'node1,10.0.0.1', 'ssh-ed25519'],
      [4, '@cert-authority', '*.example', 'ssh-ed25519'],
      [5, '@revoked', 'bad.example', 'ssh-ed25519'],
    ]);
  });

  it('matches hashed entries written by ssh-keygen -H, including [host]:port', () => {
    const e = parseKnownHosts(HASHED);
    expect(checkHostKey(e, '10.1.2.3', blobA).status).toBe('match');
    expect(checkHostKey(e, knownHostName('10.1.2.4', 2222), blobA).status).toBe('match');
    expect(checkHostKey(e, '10.1.2.4', blobA).status).toBe('unknown'); // port 22 is a different name
    expect(checkHostKey(e, '10.1.2.5', blobA).status).toBe('unknown');
  });

  it('reports a changed key with the pinning line', () => {
    const e = parseKnownHosts(`# x\n${HASHED}`);
    const r = checkHostKey(e, '10.1.2.3', blobB);
    expect(r.status).toBe('changed');
    expect(r.status === 'changed' && r.entry.line).toBe(2);
  });

  it('treats a pinned key of another type as changed, not unknown', () => {
    const rsaLike = Buffer.concat([
      Buffer.from([0, 0, 0, 7]),
      Buffer.from('ssh-rsa'),
      Buffer.alloc(8),
    ]);
    const e = parseKnownHosts(`h ssh-ed25519 ${KEY_A}`);
    expect(checkHostKey(e, 'h', rsaLike).status).toBe('changed');
  });

  it('handles wildcards, negation, case and revocation', () => {
    expect(entryMatchesHost('*.lab,!bad.lab', 'node1.lab')).toBe(true);
    expect(entryMatchesHost('*.lab,!bad.lab', 'bad.lab')).toBe(false);
    expect(entryMatchesHost('node?', 'NODE1')).toBe(true);
    expect(entryMatchesHost('10.0.0.1', '10.0.0.10')).toBe(false);
    expect(entryMatchesHost('10.0.0.*', '10.0.0.10')).toBe(true);
    const e = parseKnownHosts(`@revoked * ssh-ed25519 ${KEY_B}\nh ssh-ed25519 ${KEY_B}`);
    expect(checkHostKey(e, 'h', blobB).status).toBe('revoked');
  });

  it('ignores @cert-authority lines for pinning', () => {
    const e = parseKnownHosts(`@cert-authority h ssh-ed25519 ${KEY_B}`);
    expect(checkHostKey(e, 'h', blobA).status).toBe('unknown');
  });

  it('writes lines it reads back, plain and hashed, and appends safely', () => {
    const dir = tempDir();
    const file = join(dir, 'known_hosts');
    writeFileSync(file, `other ssh-ed25519 ${KEY_B}`); // no trailing newline
    appendKnownHost(file, formatKnownHost(['node1', '10.9.9.9'], blobA));
    appendKnownHost(
      file,
      formatKnownHost([knownHostName('10.9.9.8', 2200)], blobA, { hash: true }),
    );
    const text = readFileSync(file, 'utf8');
    expect(text.split('\n')[1]).toBe(`node1,10.9.9.9 ssh-ed25519 ${KEY_A}`);
    expect(text.split('\n')[2]).toMatch(/^\|1\|/);
    const e = readKnownHostsFile(file);
    expect(checkHostKey(e, 'other', blobB).status).toBe('match');
    expect(checkHostKey(e, '10.9.9.9', blobA).status).toBe('match');
    expect(checkHostKey(e, '[10.9.9.8]:2200', blobA).status).toBe('match');
    expect(readKnownHostsFile(join(dir, 'missing'))).toEqual([]);
    appendKnownHost(join(dir, 'new', '.ssh', 'known_hosts'), formatKnownHost(['n'], blobA));
    expect(readKnownHostsFile(join(dir, 'new', '.ssh', 'known_hosts'))).toHaveLength(1);
  });

  it('is readable by OpenSSH: ssh-keygen -F finds our hashed entry', () => {
    const dir = tempDir();
    const file = join(dir, 'known_hosts');
    writeFileSync(file, `${formatKnownHost(['[10.9.9.8]:2200'], blobA, { hash: true })}\n`);
    const out = execFileSync('ssh-keygen', ['-F', '[10.9.9.8]:2200', '-f', file]).toString();
    expect(out).toContain(KEY_A);
  });
});

describe('parseProxyJump', () => {
  it('parses hops with defaults', () => {
    expect(parseProxyJump('', 'root')).toEqual([]);
    expect(parseProxyJump('bastion', 'root')).toEqual([
      { user: 'root', address: 'bastion', port: 22 },
    ]);
    expect(parseProxyJump('ops@10.0.0.1:2222,[::1]:22', 'root')).toEqual([
      { user: 'ops', address: '10.0.0.1', port: 2222 },
      { user: 'root', address: '::1', port: 22 },
    ]);
  });
  it('rejects junk as an InputError naming the field', () => {
    expect(() => parseProxyJump('a b', 'root')).toThrow(InputError);
    expect(() => parseProxyJump('h:99999', 'root')).toThrow(/ssh.proxyJump/);
  });
});

describe('ed25519 key files', () => {
  /** What OpenSSH itself reads back from the private key file: "ssh-ed25519 AAAA…". */
  function opensshPublic(priv: string): string {
    const dir = tempDir('keygen');
    const file = join(dir, 'key');
    writeFileSync(file, priv, { mode: 0o600 });
    return execFileSync('ssh-keygen', ['-y', '-f', file])
      .toString()
      .trim()
      .split(' ')
      .slice(0, 2)
      .join(' ');
  }

  it('are read by ssh-keygen, including keys whose public key starts with a zero byte', () => {
    // ssh2's own generator breaks exactly these (1 in 256): sshd then refuses the host key.
    let zeroLead: { seed: Buffer; pub: Buffer } | undefined;
    for (let i = 0; i < 10_000 && !zeroLead; i++) {
      const jwk = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
      const pub = Buffer.from(jwk.x!, 'base64url');
      if (pub[0] === 0) zeroLead = { seed: Buffer.from(jwk.d!, 'base64url'), pub };
    }
    expect(zeroLead).toBeDefined();
    const pairs = [
      encodeEd25519(zeroLead!.seed, zeroLead!.pub, 'root@zero'),
      ...Array.from({ length: 8 }, (_, i) => generateEd25519(`k${i}`)),
    ];
    for (const p of pairs) {
      expect(opensshPublic(p.private)).toBe(p.public.split(' ').slice(0, 2).join(' '));
      expect(p.private).not.toMatch(/\n\n/);
    }
    expect(pairs[0]!.public).toMatch(/ root@zero$/);
    expect(pairs.every((p) => isWellFormedEd25519Public(p.public))).toBe(true);
    // The shape ssh2's generator writes for such a key: the leading zero stripped, 31 bytes left.
    const stripped = Buffer.concat([
      Buffer.from([0, 0, 0, 11]),
      Buffer.from('ssh-ed25519'),
      Buffer.from([0, 0, 0, 31]),
      zeroLead!.pub.subarray(1),
    ]);
    expect(isWellFormedEd25519Public(`ssh-ed25519 ${stripped.toString('base64')} root@zero`)).toBe(
      false,
    );
  });
});

describe('read-only sessions (what every phase gets; writes go through Wet)', () => {
  const etcdctl = (...cmd: string[]) => [
    '/usr/local/bin/etcdctl',
    '--endpoints=https://10.0.0.1:2379',
    '--cacert=/x',
    ...cmd,
  ];

  it('lets reads through', () => {
    for (const argv of [
      ['cat', '/var/lib/hardwire/installed.json'],
      ['ls', '-1', '/var/lib/hardwire/pending-restart'],
      ['test', '-x', '/usr/local/bin/etcdutl'],
      ['grep', '-m1', '-e', 'client-certificate-data:', '/etc/kubernetes/admin.conf'],
      ['journalctl', '-u', 'etcd', '-n', '20'],
      ['systemctl', 'show', '--property=Id', 'etcd.service'],
      ['systemctl', 'list-unit-files', '--no-legend', 'etcd.service'],
      etcdctl('endpoint', 'health', '-w', 'json'),
      etcdctl('member', 'list'),
      etcdctl('get', '/registry/secrets/x'),
      // audit: the /proc reader (a registered script) and a running binary's own version
      ['sh', '-c', PROC_DUMP],
      ['/proc/4242/exe', '--version'],
      // audit --upgrade-to: one GET through a kubeconfig on the host, its three arguments as data
      ['bash', '-c', KUBE_GET, 'kube-get', '/proc/7/root', '/etc/kubernetes/kcm.conf', '/version'],
    ])
      expect(isReadOnlyCommand(argv), argv.join(' ')).toBe(true);
    // A component's binary by its path, asked its version, only when the session was opened for it (audit's).
    const V = { kubelet: ['--version'], 'kube-apiserver': ['--version'], k0s: ['version'] };
    for (const argv of [
      ['/usr/local/bin/kubelet', '--version'],
      ['/var/lib/k0s/bin/kube-apiserver', '--version'],
    ]) {
      expect(isReadOnlyCommand(argv, V), argv.join(' ')).toBe(true);
      expect(isReadOnlyCommand(argv), argv.join(' ')).toBe(false);
      expect(isReadOnlyCommand([...argv, '--x'], V)).toBe(false);
    }
    expect(isReadOnlyCommand(['/usr/local/bin/k0s', 'version'], V)).toBe(true);
    expect(isReadOnlyCommand(['/usr/local/bin/k0s', 'version'])).toBe(false);
    expect(isReadOnlyCommand(['/usr/local/bin/k0s', 'reset'], V)).toBe(false);
    expect(isReadOnlyCommand(['/usr/local/bin/kubelet', 'version'], V)).toBe(false);
  });

  it('refuses every kind of write hardwire makes, and anything it does not know', () => {
    for (const argv of [
      ['mkdir', '-p', '/var/lib/hardwire/backup'],
      ['rm', '-f', '/x'],
      ['rm', '-rf', '--', '/var/lib/etcd'],
      ['mv', '/a', '/b'],
      ['rmdir', '/a'],
      ['systemctl', 'start', '--no-block', 'etcd.service'],
      ['systemctl', 'restart', 'kube-apiserver.service'],
      ['systemctl', 'stop', 'etcd.service'],
      ['systemctl', '--quiet', 'enable', 'etcd.service'],
      ['systemctl', 'disable', '--now', 'etcd.service'],
      ['systemctl', 'daemon-reload'],
      ['systemctl', 'reset-failed', 'etcd.service'],
      ['journalctl', '--vacuum-time=1s'],
      etcdctl('snapshot', 'save', '/var/lib/hardwire/snapshots/x.db'),
      etcdctl('put', 'k', 'v'),
      etcdctl('del', 'k'),
      etcdctl('member', 'remove', 'abc'),
      ['sh', '-c', 'cat /etc/hostname'],
      ['sh', '-c', `${PROC_DUMP}; rm -rf /var/lib/etcd`],
      ['sh', '-c', PROC_DUMP, 'extra'],
      ['sh', '-e', '-c', PROC_DUMP],
      ['sh', '-c', KUBE_GET, 'kube-get', '', '/k', '/version'],
      ['bash', '-c', KUBE_GET, 'kube-get', '', '/k'],
      ['bash', '-c', KUBE_GET, 'kube-get', '', '/k', '/version', 'extra'],
      ['bash', '-c', KUBE_GET, 'other', '', '/k', '/version'],
      ['bash', '-c', `${KUBE_GET}\nrm -rf /var/lib/etcd`, 'kube-get', '', '/k', '/version'],
      ['bash', '-c', PROC_DUMP],
      ['/proc/4242/exe'],
      ['/proc/4242/exe', 'version'],
      ['/proc/4242/exe', '--version', '--data-dir=/x'],
      ['/proc/self/exe', '--version'],
      ['/usr/local/bin/kubectl', '--version'],
      ['/usr/local/bin/kubelet', '--config=/x'],
      ['kubelet', '--version'],
      ['env', 'BK=/x', 'sh', '-c', 'cp a b'],
      ['/usr/local/bin/etcdutl', 'snapshot', 'restore', '/x'],
      ['tee', '/etc/x'],
    ])
      expect(isReadOnlyCommand(argv), argv.join(' ')).toBe(false);
  });
});

describe('ssh2 crypto (scripts/setup.sh builds its binding)', () => {
  it('has its native binding, and offers AES-GCM first', async () => {
    // Without the binding ssh2 falls back to JavaScript packet crypto: correct, but about 1.6x slower on a push.
    const { createRequire } = await import('node:module');
    const req = createRequire(import.meta.url);
    expect(
      (req('ssh2/lib/protocol/crypto.js') as { bindingAvailable: boolean }).bindingAvailable,
    ).toBe(true);
    const { DEFAULT_CIPHER } = req('ssh2/lib/protocol/constants.js') as {
      DEFAULT_CIPHER: string[];
    };
    expect(DEFAULT_CIPHER[0]).toBe('aes128-gcm@openssh.com');
  });
});
