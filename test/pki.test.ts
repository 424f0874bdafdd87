// The PKI, read back with the real openssl.
import { beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { hardwire } from './helpers/cli.ts';
import { tempDir } from './helpers/tmp.ts';

const inventory = join(import.meta.dirname, '..', 'hosts', 'example.yaml');
let state: string;
let pki: string;
let firstRun: ReturnType<typeof hardwire>;
// The wall clock around the first run: every notBefore/notAfter is bounded by these on both sides.
let runStart: number;
let runEnd: number;

function openssl(args: string[]): string {
  return execFileSync('openssl', args, { encoding: 'utf8' });
}

function text(crt: string): string {
  return openssl(['x509', '-in', join(pki, crt), '-noout', '-text']);
}

function sans(crt: string): string[] {
  const m = /Subject Alternative Name:\s*\n\s*(.+)\n/.exec(text(crt));
  return m ? m[1]!.split(', ').map((s) => s.trim()) : [];
}

function subject(crt: string): string {
  return openssl([
    'x509',
    '-in',
    join(pki, crt),
    '-noout',
    '-subject',
    '-nameopt',
    'RFC2253',
  ]).trim();
}

function hashTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = join(e.parentPath, e.name);
    out[p] = `${createHash('sha256').update(readFileSync(p)).digest('hex')} ${statSync(p).mtimeMs}`;
  }
  return out;
}

beforeAll(() => {
  state = tempDir();
  pki = join(state, 'demo', 'pki');
  runStart = Date.now();
  firstRun = hardwire(['pki', '--inventory', inventory, '--state-dir', state, '--json']);
  runEnd = Date.now();
});

/**
 * What the pki dir holds, read from the disk: one entry per cert/key pair (named by its .crt), the
 * service-account pair by sa.key, and every other file by itself. The run must report exactly these.
 */
function filesOnDisk(): string[] {
  const all = readdirSync(pki, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(pki.length + 1));
  const has = new Set(all);
  return all
    .filter(
      (f) =>
        !(f.endsWith('.key') && has.has(f.replace(/\.key$/, '.crt'))) &&
        !(f === 'sa.pub' && has.has('sa.key')),
    )
    .sort();
}

describe('pki', () => {
  it('runs and reports every file created', () => {
    expect(firstRun.code).toBe(0);
    const doc = JSON.parse(firstRun.stdout) as { events: { file: string; action: string }[] };
    const onDisk = filesOnDisk();
    // 3 CAs, 13 leaves (9 + an etcd server and peer cert per host), sa and the encryption config.
    expect(onDisk.length).toBe(20);
    expect([...doc.events.map((e) => e.file)].sort()).toEqual(onDisk);
    expect(doc.events.map((e) => e.action)).toEqual(onDisk.map(() => 'created'));
  });

  const chains: [string, string][] = [
    ['apiserver.crt', 'ca.crt'],
    ['apiserver-kubelet-client.crt', 'ca.crt'],
    ['apiserver-etcd-client.crt', 'etcd/ca.crt'],
    ['front-proxy-client.crt', 'front-proxy-ca.crt'],
    ['etcd/healthcheck-client.crt', 'etcd/ca.crt'],
    ['etcd/cp-0/server.crt', 'etcd/ca.crt'],
    ['etcd/cp-1/peer.crt', 'etcd/ca.crt'],
    ['kubeconfig/admin.crt', 'ca.crt'],
    ['kubeconfig/scheduler.crt', 'ca.crt'],
  ];
  for (const [leaf, ca] of chains) {
    it(`openssl verifies ${leaf} against ${ca} only`, () => {
      expect(openssl(['verify', '-CAfile', join(pki, ca), join(pki, leaf)])).toContain(': OK');
      const other = ca === 'ca.crt' ? 'etcd/ca.crt' : 'ca.crt';
      expect(() =>
        execFileSync('openssl', ['verify', '-CAfile', join(pki, other), join(pki, leaf)], {
          stdio: 'pipe',
        }),
      ).toThrow();
    });
  }

  // Exactly these SANs: kubeadm's four service names, localhost, every control-plane host's name and
  // address, loopback, the first service IP (10.96.0.0/12 -> 10.96.0.1) and the endpoint
  // (198.51.100.10:6443, cp-0's address, by default). Nothing else, KTHW's kubernetes.svc.cluster.local included.
  const EXAMPLE_APISERVER_SANS = [
    'DNS:kubernetes',
    'DNS:kubernetes.default',
    'DNS:kubernetes.default.svc',
    'DNS:kubernetes.default.svc.cluster.local',
    'DNS:localhost',
    'DNS:cp-0',
    'DNS:cp-1',
    'DNS:cp-2',
    'IP Address:127.0.0.1',
    'IP Address:10.96.0.1',
    'IP Address:198.51.100.10',
    'IP Address:198.51.100.11',
    'IP Address:198.51.100.12',
  ];

  it("the apiserver cert has exactly the service IP, kubernetes.default.svc.<domain>, the hosts and the endpoint, not KTHW's SAN", () => {
    expect(sans('apiserver.crt').sort()).toEqual([...EXAMPLE_APISERVER_SANS].sort());
    expect(text('apiserver.crt')).toMatch(
      /Extended Key Usage: \n\s+TLS Web Server Authentication\n/,
    );
  });

  it("subjects and groups match kubeadm, without KTHW's scheduler typo", () => {
    expect(subject('kubeconfig/scheduler.crt')).toBe('subject=CN=system:kube-scheduler');
    expect(subject('kubeconfig/admin.crt')).toBe(
      'subject=CN=kubernetes-admin,O=kubeadm:cluster-admins',
    );
    expect(subject('kubeconfig/super-admin.crt')).toBe(
      'subject=CN=kubernetes-super-admin,O=system:masters',
    );
    expect(subject('kubeconfig/controller-manager.crt')).toBe(
      'subject=CN=system:kube-controller-manager',
    );
    expect(subject('apiserver-etcd-client.crt')).toBe('subject=CN=kube-apiserver-etcd-client');
    // kubeadm v1.36.3 gives the kubelet client no group (RBAC binds the user instead)
    expect(subject('apiserver-kubelet-client.crt')).toBe(
      'subject=CN=kube-apiserver-kubelet-client',
    );
    expect(subject('etcd/cp-1/server.crt')).toBe('subject=CN=cp-1');
  });

  it("etcd member certs carry that host's names for server and client auth", () => {
    for (const kind of ['peer', 'server']) {
      expect(sans(`etcd/cp-1/${kind}.crt`).sort(), kind).toEqual(
        [
          'DNS:cp-1',
          'DNS:localhost',
          'IP Address:0:0:0:0:0:0:0:1',
          'IP Address:127.0.0.1',
          'IP Address:198.51.100.11',
        ].sort(),
      );
    }
    expect(text('etcd/cp-1/peer.crt')).toMatch(
      /TLS Web Server Authentication, TLS Web Client Authentication/,
    );
    expect(text('apiserver-etcd-client.crt')).toMatch(
      /Extended Key Usage: \n\s+TLS Web Client Authentication\n/,
    );
  });

  it('CAs are CAs for 10 years, leaves for 1 year, backdated 5 minutes, SHA-256, positive serials', () => {
    const dates = (crt: string) => {
      const out = openssl(['x509', '-in', join(pki, crt), '-noout', '-startdate', '-enddate']);
      const [nb, na] = [...out.matchAll(/=(.+)/g)].map((m) => new Date(m[1]!).getTime());
      return { nb: nb!, na: na! };
    };
    const day = 86_400_000;
    const backdate = 5 * 60_000;
    // Certificates hold whole seconds: the window opens at most 1 s before runStart (truncation).
    const from = Math.floor(runStart / 1000) * 1000;
    for (const [crt, days] of [
      ['ca.crt', 3650],
      ['etcd/ca.crt', 3650],
      ['front-proxy-ca.crt', 3650],
      ['apiserver.crt', 365],
      ['etcd/cp-1/peer.crt', 365],
      ['kubeconfig/admin.crt', 365],
    ] as const) {
      const { nb, na } = dates(crt);
      // Issued during the run, backdated exactly 5 minutes: bounded on both sides by the clock read
      // before and after the run (no dependence on how long the run or the test took).
      expect(nb, `${crt} notBefore >= run start - 5 min`).toBeGreaterThanOrEqual(from - backdate);
      expect(nb, `${crt} notBefore <= run end - 5 min`).toBeLessThanOrEqual(runEnd - backdate);
      expect(na, `${crt} notAfter >= run start + ${days} d`).toBeGreaterThanOrEqual(
        from + days * day,
      );
      expect(na, `${crt} notAfter <= run end + ${days} d`).toBeLessThanOrEqual(runEnd + days * day);
      expect(na - nb, `${crt} validity`).toBe(days * day + backdate);
    }
    expect(text('ca.crt')).toMatch(/CA:TRUE/);
    expect(text('ca.crt')).toMatch(
      /Key Usage: critical\n\s+Digital Signature, Key Encipherment, Certificate Sign/,
    );
    expect(text('apiserver.crt')).toMatch(
      /Key Usage: critical\n\s+Digital Signature, Key Encipherment\n/,
    );
    expect(text('apiserver.crt')).toMatch(/Signature Algorithm: sha256WithRSAEncryption/);
    expect(text('apiserver.crt')).toMatch(/Public-Key: \(2048 bit\)/);
    expect(openssl(['x509', '-in', join(pki, 'apiserver.crt'), '-noout', '-serial'])).not.toContain(
      '-',
    );
  });

  it('keys are 0600 and no key material reaches stdout or stderr', () => {
    for (const k of [
      'ca.key',
      'etcd/ca.key',
      'sa.key',
      'apiserver.key',
      'etcd/cp-0/server.key',
      'encryption-config.yaml',
    ]) {
      expect(statSync(join(pki, k)).mode & 0o777, k).toBe(0o600);
    }
    expect(statSync(join(state, 'demo', 'kubeconfigs', 'admin.conf')).mode & 0o777).toBe(0o600);
    expect(firstRun.stdout + firstRun.stderr).not.toMatch(/PRIVATE KEY|secret:/);
  });

  it('a second run changes no byte and no mtime', () => {
    const before = hashTree(state);
    const r = hardwire(['pki', '--inventory', inventory, '--state-dir', state, '--json']);
    expect(r.code).toBe(0);
    const events = JSON.parse(r.stdout).events as { file: string; action: string }[];
    expect([...events.map((e) => e.file)].sort()).toEqual(filesOnDisk());
    expect(events.map((e) => e.action)).toEqual(events.map(() => 'kept'));
    expect(hashTree(state)).toEqual(before);
  });

  it('a changed inventory reissues only the leaves it affects, with the reason, and keeps the CA', () => {
    const dir = tempDir();
    const inv = join(dir, 'inv.yaml');
    writeFileSync(
      inv,
      readFileSync(inventory, 'utf8').replace('extraSANs: []', 'extraSANs: [api.example.com]'),
    );
    const caBefore = readFileSync(join(pki, 'ca.crt'), 'utf8');
    const r = hardwire(['pki', '--inventory', inv, '--state-dir', state, '--json']);
    expect(r.code).toBe(0);
    const events = JSON.parse(r.stdout).events as {
      file: string;
      action: string;
      reasons: string[];
    }[];
    const changed = events.filter((e) => e.action !== 'kept');
    expect(changed.map((e) => e.file)).toEqual(['apiserver.crt']);
    expect(changed[0]!.reasons.join()).toMatch(/DNS SANs differ \(missing: api\.example\.com/);
    expect(readFileSync(join(pki, 'ca.crt'), 'utf8')).toBe(caBefore);
    expect(sans('apiserver.crt').sort()).toEqual(
      [...EXAMPLE_APISERVER_SANS, 'DNS:api.example.com'].sort(),
    );
  });

  it('a non-default service CIDR, DNS domain and endpoint give exactly their SANs, and openssl matches the names', () => {
    const dir = tempDir();
    const inv = join(dir, 'inv.yaml');
    const src = readFileSync(inventory, 'utf8');
    const custom = src
      .replace('serviceCIDR: 10.96.0.0/12', 'serviceCIDR: 10.32.0.0/16')
      .replace('dnsDomain: cluster.local', 'dnsDomain: hw.internal')
      .replace(/apiServerEndpoint: ""[^\n]*/, 'apiServerEndpoint: "api.demo.hardwire.test:6443"')
      .replace('extraSANs: []', 'extraSANs: [alt.demo.hardwire.test, 203.0.113.7]');
    expect(custom).not.toBe(src);
    writeFileSync(inv, custom);
    const r = hardwire(['pki', '--inventory', inv, '--state-dir', dir, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const crt = join(dir, 'demo', 'pki', 'apiserver.crt');
    const got = /Subject Alternative Name:\s*\n\s*(.+)\n/
      .exec(openssl(['x509', '-in', crt, '-noout', '-text']))![1]!
      .split(', ')
      .map((x) => x.trim());
    expect(got.sort()).toEqual(
      [
        'DNS:kubernetes',
        'DNS:kubernetes.default',
        'DNS:kubernetes.default.svc',
        'DNS:kubernetes.default.svc.hw.internal',
        'DNS:localhost',
        'DNS:cp-0',
        'DNS:cp-1',
        'DNS:cp-2',
        'DNS:api.demo.hardwire.test',
        'DNS:alt.demo.hardwire.test',
        'IP Address:127.0.0.1',
        'IP Address:10.32.0.1',
        'IP Address:198.51.100.10',
        'IP Address:198.51.100.11',
        'IP Address:198.51.100.12',
        'IP Address:203.0.113.7',
      ].sort(),
    );
    // openssl's own name matching (RFC 6125), not a string search.
    const check = (flag: string, name: string) =>
      openssl(['x509', '-in', crt, '-noout', flag, name]).trim();
    expect(check('-checkhost', 'kubernetes.default.svc.hw.internal')).toBe(
      'Hostname kubernetes.default.svc.hw.internal does match certificate',
    );
    expect(check('-checkhost', 'kubernetes.default.svc.cluster.local')).toBe(
      'Hostname kubernetes.default.svc.cluster.local does NOT match certificate',
    );
    expect(check('-checkhost', 'api.demo.hardwire.test')).toBe(
      'Hostname api.demo.hardwire.test does match certificate',
    );
    expect(check('-checkip', '10.32.0.1')).toBe('IP 10.32.0.1 does match certificate');
    expect(check('-checkip', '10.96.0.1')).toBe('IP 10.96.0.1 does NOT match certificate');
    const admin = readFileSync(join(dir, 'demo', 'kubeconfigs', 'admin.conf'), 'utf8');
    expect(admin).toMatch(/server: https:\/\/api\.demo\.hardwire\.test:6443\n/);
  });

  it('a lost CA key is an error, never a silent new CA', () => {
    const dir = tempDir();
    expect(hardwire(['pki', '--inventory', inventory, '--state-dir', dir]).code).toBe(0);
    execFileSync('rm', [join(dir, 'demo', 'pki', 'etcd', 'ca.key')]);
    const r = hardwire(['pki', '--inventory', inventory, '--state-dir', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/CA etcd-ca: found etcd\/ca\.crt but not etcd\/ca\.key; restore/);
  });

  it('the kubeconfigs carry the right servers and verify against the CA', () => {
    const admin = readFileSync(join(state, 'demo', 'kubeconfigs', 'admin.conf'), 'utf8');
    expect(admin).toMatch(/server: https:\/\/198\.51\.100\.10:6443/);
    const sched = readFileSync(join(state, 'demo', 'kubeconfigs', 'scheduler.conf'), 'utf8');
    expect(sched).toMatch(/server: https:\/\/127\.0\.0\.1:6443/);
    const certB64 = /client-certificate-data: (\S+)/.exec(sched)![1]!;
    const certFile = join(tempDir(), 'c.crt');
    writeFileSync(certFile, Buffer.from(certB64, 'base64'));
    expect(openssl(['verify', '-CAfile', join(pki, 'ca.crt'), certFile])).toContain(': OK');
  });
});
