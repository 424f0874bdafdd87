// certs check and certs renew against the files really installed on a wired 2-host lab.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { X509Certificate, createHash, createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hardwire } from './helpers/cli.ts';
import { wiredTestLab, remote, type TestLab } from './helpers/lab.ts';
import { loadInventory } from '../core/inventory/load.ts';
import { allLeaves } from '../core/pki/table.ts';
import { issueLeaf } from '../core/pki/issue.ts';
import { keptSpec, loadSigner, publicPemOf } from '../core/certs/renew.ts';
import { kubeconfigYaml } from '../core/pki/kubeconfig.ts';
import { expectRolled, unitClocks } from './helpers/units.ts';

let lab: TestLab;
let inv: string;
let state: string;

interface Row {
  name: string;
  host: string;
  path: string;
  status: string;
  notAfter?: string;
  fingerprint?: string;
  signedByHostCa?: boolean;
}
interface Check {
  ok: boolean;
  certs: Row[];
  cas: Row[];
}

function check(): { code: number; report: Check } {
  const r = hardwire(['certs', 'check', '--inventory', inv, '--state-dir', state, '--json']);
  expect([0, 1], r.stderr).toContain(r.code);
  return { code: r.code, report: JSON.parse(r.stdout) as Check };
}

const row = (c: Check, name: string, host: string) =>
  c.certs.find((x) => x.name === name && x.host === host)!;

/** A cert from the real CA for leaf id, expired an hour ago, same key as the operator copy. */
async function expiredPem(leafId: string): Promise<{ certPem: string; keyPem: string }> {
  const i = loadInventory(inv);
  const spec = allLeaves(i).find((l) => l.id === leafId && (!l.host || l.host === 'node2'))!;
  const dir = join(state, i.cluster.name, 'pki');
  const keyPem = readFileSync(join(dir, `${spec.file}.key`), 'utf8');
  const now = Date.now();
  const signed = await issueLeaf(
    keptSpec(spec, readFileSync(join(dir, `${spec.file}.crt`), 'utf8')),
    loadSigner(state, i, spec.ca),
    { notBefore: new Date(now - 7200_000), notAfter: new Date(now - 3600_000) },
    { key: { keyPem, publicPem: publicPemOf(keyPem) } },
  );
  return { certPem: signed.certPem, keyPem };
}

const PKI = '/etc/kubernetes/pki';
/** The CA files a control-plane host gets: the cluster CA's cert and key, the front-proxy and etcd CA certs. */
const CA_FILES = [
  `${PKI}/ca.crt`,
  `${PKI}/ca.key`,
  `${PKI}/front-proxy-ca.crt`,
  `${PKI}/etcd/ca.crt`,
];

interface HostCa {
  sha256: Record<string, string>;
  keyPublic: string;
  certPublic: string;
}

const spkiSha = (k: ReturnType<typeof createPublicKey>) =>
  createHash('sha256')
    .update(k.export({ type: 'spki', format: 'der' }))
    .digest('hex');

/**
 * Each host's CA files as they are on the host, read by this test and not by hardwire: sha256sum on
 * the host, and the public part of the host's ca.key (lab hosts have no openssl, so the key is read
 * over SSH and its public key derived here) next to the public key in the host's ca.crt.
 */
async function hostCas(): Promise<Record<string, HostCa>> {
  const out: Record<string, HostCa> = {};
  for (const h of lab.info.hosts) {
    const s = await lab.ssh(h.name);
    const sums = await remote(s, ['sha256sum', '--', ...CA_FILES]);
    const sha256 = Object.fromEntries(
      sums
        .split('\n')
        .map((l) => l.split(/\s+/))
        .map(([sum, path]) => [path!, sum!]),
    );
    expect(Object.keys(sha256).sort(), `${h.name}: sha256sum ${sums}`).toEqual(
      [...CA_FILES].sort(),
    );
    const keyPublic = spkiSha(createPublicKey(await remote(s, ['cat', `${PKI}/ca.key`])));
    const certPublic = spkiSha(
      new X509Certificate(await remote(s, ['cat', `${PKI}/ca.crt`])).publicKey,
    );
    await s.close();
    out[h.name] = { sha256, keyPublic, certPublic };
  }
  return out;
}

/** The renewed certs on each host are signed by the CA certs on that same host. */
async function expectSignedByHostCas(): Promise<void> {
  for (const h of lab.info.hosts) {
    const s = await lab.ssh(h.name);
    const x = async (path: string) => new X509Certificate(await remote(s, ['cat', path]));
    const conf = await remote(s, ['cat', '/etc/kubernetes/scheduler.conf']);
    const sched = new X509Certificate(
      Buffer.from(/client-certificate-data: (\S+)/.exec(conf)![1]!, 'base64'),
    );
    const pairs: [string, X509Certificate, X509Certificate][] = [
      [
        'etcd/healthcheck-client.crt',
        await x(`${PKI}/etcd/healthcheck-client.crt`),
        await x(`${PKI}/etcd/ca.crt`),
      ],
      [
        'front-proxy-client.crt',
        await x(`${PKI}/front-proxy-client.crt`),
        await x(`${PKI}/front-proxy-ca.crt`),
      ],
      ['scheduler.conf', sched, await x(`${PKI}/ca.crt`)],
    ];
    await s.close();
    for (const [name, leaf, ca] of pairs) {
      expect(
        leaf.checkIssued(ca) && leaf.verify(ca.publicKey),
        `${h.name}:${name} is not signed by the host's CA`,
      ).toBe(true);
    }
  }
}

/**
 * Every cert installed on each host, found there by find: the *.crt files under /etc/kubernetes/pki
 * and the kubeconfigs in /etc/kubernetes that embed a client cert. `host:path`, sorted.
 */
async function installedCerts(): Promise<string[]> {
  const out: string[] = [];
  for (const h of lab.info.hosts) {
    const s = await lab.ssh(h.name);
    const crts = await remote(s, ['find', PKI, '-type', 'f', '-name', '*.crt']);
    const confs = await remote(s, [
      'find',
      '/etc/kubernetes',
      '-maxdepth',
      '1',
      '-type',
      'f',
      '-name',
      '*.conf',
      '-exec',
      'grep',
      '-l',
      'client-certificate-data',
      '{}',
      '+',
    ]);
    await s.close();
    out.push(
      ...`${crts}\n${confs}`
        .split('\n')
        .filter(Boolean)
        .map((p) => `${h.name}:${p}`),
    );
  }
  return out.sort();
}

interface OnHost {
  notAfter: number;
  fingerprint: string;
}
/** A cert as it is on the host (a kubeconfig's embedded client cert), read over SSH: its notAfter and fingerprint; undefined when the file is missing. */
async function certsOnHosts(paths: string[]): Promise<Record<string, OnHost | undefined>> {
  const out: Record<string, OnHost | undefined> = {};
  for (const h of lab.info.hosts) {
    const s = await lab.ssh(h.name);
    for (const path of paths) {
      const text = await remote(s, ['cat', path]);
      const der = path.endsWith('.conf')
        ? /client-certificate-data: (\S+)/.exec(text)?.[1]
        : undefined;
      const x =
        text === '' ? undefined : new X509Certificate(der ? Buffer.from(der, 'base64') : text);
      out[`${h.name}:${path}`] = x && {
        notAfter: Date.parse(x.validTo),
        fingerprint: x.fingerprint256,
      };
    }
    await s.close();
  }
  return out;
}

/** (Soft: every cert out of place is reported.) Each cert on each host is a new one (another fingerprint) valid for a year from the renew, later than before. */
function expectRenewed(
  before: Record<string, OnHost | undefined>,
  after: Record<string, OnHost | undefined>,
  renewStart: number,
): void {
  expect.soft(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
  const leafDays = loadInventory(inv).cluster.certValidity.leafDays;
  for (const [k, a] of Object.entries(after)) {
    expect.soft(a, `${k} installed`).toBeDefined();
    const b = before[k];
    if (b) {
      expect.soft(a!.fingerprint, `${k} is a new cert`).not.toBe(b.fingerprint);
      expect.soft(a!.notAfter, `${k} expires later than before`).toBeGreaterThan(b.notAfter);
    }
    // Whole seconds in the cert: at most 1 s before renewStart + leafDays.
    expect
      .soft(a!.notAfter, `${k} valid ${leafDays} days from the renew`)
      .toBeGreaterThanOrEqual(renewStart - 1000 + leafDays * 86_400_000);
    expect
      .soft(a!.notAfter, `${k} valid ${leafDays} days from the renew`)
      .toBeLessThanOrEqual(Date.now() + leafDays * 86_400_000);
  }
}

beforeAll(async () => {
  ({ lab, inv, state } = await wiredTestLab('w2', 2));
});

afterAll(async () => {
  await lab?.down();
});

describe('certs on a wired 2-host lab', () => {
  it('bad input: one line, exit 2', () => {
    const a = hardwire([
      'certs',
      'renew',
      'kubelet.conf',
      '--inventory',
      inv,
      '--state-dir',
      state,
    ]);
    expect(a.code).toBe(2);
    // One error line (the lab's 2-member etcd warning may precede it).
    expect(
      a.stderr
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('warning:')),
    ).toHaveLength(1);
    expect(a.stderr).toMatch(
      /name: unknown certificate "kubelet.conf"; valid: admin.conf, apiserver/,
    );
    expect(hardwire(['certs', '--inventory', inv]).code).toBe(2);
    expect(hardwire(['certs', 'check', '--restart', '--inventory', inv]).stderr).toMatch(
      /--restart: only applies to "certs renew"/,
    );
    expect(hardwire(['certs', '--help']).stdout).toMatch(/^usage: hardwire certs check/);
  });

  it('check lists every installed cert, kubeconfig client certs included, matching the remote bytes', async () => {
    const { code, report } = check();
    expect(code).toBe(0);
    expect(report.ok).toBe(true);
    // The rows are exactly what find lists on the hosts (CA certs in their own table).
    const installed = await installedCerts();
    expect(installed.length).toBeGreaterThan(10);
    expect([...report.certs, ...report.cas].map((c) => `${c.host}:${c.path}`).sort()).toEqual(
      installed,
    );
    expect(report.certs.filter((c) => c.status !== 'ok' || c.signedByHostCa !== true)).toEqual([]);
    expect(report.cas.map((c) => `${c.name}@${c.host}`).sort()).toEqual([
      'ca@node1',
      'ca@node2',
      'etcd-ca@node1',
      'etcd-ca@node2',
      'front-proxy-ca@node1',
      'front-proxy-ca@node2',
    ]);
    // The scheduler.conf row is the cert embedded in the file on node2, read over SSH.
    const s = await lab.ssh('node2');
    const conf = await remote(s, ['cat', '/etc/kubernetes/scheduler.conf']);
    await s.close();
    const b64 = /client-certificate-data: (\S+)/.exec(conf)![1]!;
    expect(row(report, 'scheduler.conf', 'node2').fingerprint).toBe(
      new X509Certificate(Buffer.from(b64, 'base64')).fingerprint256,
    );
    const text = hardwire(['certs', 'check', '--inventory', inv, '--state-dir', state]).stdout;
    expect(text.split('\n')[0]).toMatch(
      /^CERTIFICATE\s+HOST\s+EXPIRES\s+RESIDUAL TIME\s+CERTIFICATE AUTHORITY\s+KEY ALGORITHM\s+FILE$/,
    );
    expect(text).toMatch(
      /^CERTIFICATE AUTHORITY\s+HOST\s+EXPIRES\s+RESIDUAL TIME\s+KEY ALGORITHM\s+FILE$/m,
    );
    expect(text).not.toMatch(/PRIVATE KEY|client-key-data/);
  });

  it('an expired cert and a missing one on a host are shown plainly, exit 1', async () => {
    const hc = await expiredPem('etcd-healthcheck-client');
    const sc = await expiredPem('kubeconfig-scheduler');
    const i = loadInventory(inv);
    const caPem = loadSigner(state, i, 'ca').certPem;
    const s = await lab.ssh('node2');
    await s.writeFileAtomic('/etc/kubernetes/pki/etcd/healthcheck-client.crt', hc.certPem, {
      mode: 0o644,
    });
    await s.writeFileAtomic(
      '/etc/kubernetes/scheduler.conf',
      kubeconfigYaml({
        cluster: i.cluster.name,
        server: 'https://127.0.0.1:6443',
        caPem,
        certPem: sc.certPem,
        keyPem: sc.keyPem,
        user: 'system:kube-scheduler',
      }),
      { mode: 0o600 },
    );
    await s.exec(['rm', '-f', '/etc/kubernetes/pki/front-proxy-client.crt']);
    await s.close();
    const { code, report } = check();
    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    expect(row(report, 'etcd-healthcheck-client', 'node2').status).toBe('EXPIRED');
    expect(row(report, 'scheduler.conf', 'node2').status).toBe('EXPIRED');
    expect(row(report, 'front-proxy-client', 'node2').status).toBe('MISSING');
    expect(row(report, 'scheduler.conf', 'node1').status).toBe('ok');
    expect(report.certs.filter((c) => c.status !== 'ok')).toHaveLength(3);
    const text = hardwire(['certs', 'check', '--inventory', inv, '--state-dir', state]).stdout;
    expect(text).toMatch(
      /^scheduler\.conf\s+node2\s+.*EXPIRED \d+m ago\s+ca\s+RSA-2048\s+\/etc\/kubernetes\/scheduler\.conf$/m,
    );
    expect(text).toMatch(/^front-proxy-client\s+node2\s+-\s+MISSING\s/m);
  });

  it('renew without --restart pushes, keeps key and CA, and names exactly what must restart and why', async () => {
    const casBefore = await hostCas();
    for (const [h, c] of Object.entries(casBefore))
      expect(c.keyPublic, `${h}: ca.key is not the key of ca.crt`).toBe(c.certPublic);
    const s = await lab.ssh('node2');
    const keyBefore = await remote(s, [
      'sha256sum',
      '/etc/kubernetes/pki/etcd/healthcheck-client.key',
    ]);
    const renewed = [
      `${PKI}/etcd/healthcheck-client.crt`,
      '/etc/kubernetes/scheduler.conf',
      `${PKI}/front-proxy-client.crt`,
    ];
    const certsBefore = await certsOnHosts(renewed);
    const renewStart = Date.now();
    const r = hardwire([
      'certs',
      'renew',
      'etcd-healthcheck-client',
      'scheduler.conf',
      'front-proxy-client',
      '--inventory',
      inv,
      '--state-dir',
      state,
      '--json',
    ]);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    // Renewed, read on the hosts: the signature check below passes for the old certs as well.
    expectRenewed(certsBefore, await certsOnHosts(renewed), renewStart);
    const out = JSON.parse(r.stdout) as {
      pushed: { host: string; path: string }[];
      restarted: unknown[];
      restartNeeded: { host: string; component: string; why: string }[];
      caFingerprint: { before: unknown; after: unknown; unchanged: boolean };
    };
    expect(out.caFingerprint.unchanged).toBe(true);
    // The claim, checked on the hosts: every CA file byte-identical, the same CA key.
    expect(await hostCas()).toEqual(casBefore);
    await expectSignedByHostCas();
    expect(out.restarted).toEqual([]);
    expect(out.pushed.map((p) => `${p.host}:${p.path}`).sort()).toEqual([
      'node1:/etc/kubernetes/pki/etcd/healthcheck-client.crt',
      'node1:/etc/kubernetes/pki/front-proxy-client.crt',
      'node1:/etc/kubernetes/scheduler.conf',
      'node2:/etc/kubernetes/pki/etcd/healthcheck-client.crt',
      'node2:/etc/kubernetes/pki/front-proxy-client.crt',
      'node2:/etc/kubernetes/scheduler.conf',
    ]);
    // healthcheck-client is read by nobody at start; the other two are.
    expect(out.restartNeeded.map((p) => `${p.host}/${p.component}`).sort()).toEqual([
      'node1/kube-apiserver',
      'node1/kube-scheduler',
      'node2/kube-apiserver',
      'node2/kube-scheduler',
    ]);
    expect(
      out.restartNeeded.find((p) => p.host === 'node2' && p.component === 'kube-scheduler')!.why,
    ).toBe('kube-scheduler reads /etc/kubernetes/scheduler.conf only at start');
    expect(await remote(s, ['ls', '/var/lib/hardwire/pending-restart'])).toBe(
      'kube-apiserver\nkube-scheduler',
    );
    expect(await remote(s, ['sha256sum', '/etc/kubernetes/pki/etcd/healthcheck-client.key'])).toBe(
      keyBefore,
    );
    await s.close();
    const { code, report } = check();
    expect(code).toBe(0);
    expect(report.certs.every((c) => c.status === 'ok')).toBe(true);
    expect(r.stdout + r.stderr).not.toMatch(/PRIVATE KEY|client-key-data/);
  });

  it('renew --restart restarts the readers in wire order, one host at a time, markers cleared', async () => {
    const casBefore = await hostCas();
    const hosts = lab.info.hosts.map((h) => h.name);
    const units = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'].map(
      (c) => `${c}.service`,
    );
    const clocks = await unitClocks(lab, hosts, units);
    const certsBefore = await certsOnHosts(['/etc/kubernetes/scheduler.conf']);
    const renewStart = Date.now();
    const r = hardwire(
      [
        'certs',
        'renew',
        'scheduler.conf',
        '--restart',
        '--inventory',
        inv,
        '--state-dir',
        state,
        '--json',
      ],
      { timeoutMs: 600_000 },
    );
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expectRenewed(certsBefore, await certsOnHosts(['/etc/kubernetes/scheduler.conf']), renewStart);
    const out = JSON.parse(r.stdout) as {
      restarted: { host: string; unit: string }[];
      caFingerprint: { unchanged: boolean };
    };
    // The apiserver markers left by the previous test are honoured first (etcd, apiserver, then controllers).
    const order = [
      'node1/kube-apiserver.service',
      'node2/kube-apiserver.service',
      'node1/kube-scheduler.service',
      'node2/kube-scheduler.service',
    ];
    expect(out.restarted.map((x) => `${x.host}/${x.unit}`)).toEqual(order);
    // The order as systemd saw it on the hosts: each went down only after the one before was up again; nothing else moved.
    await expectRolled(lab, clocks, await unitClocks(lab, hosts, units), order);
    expect(out.caFingerprint.unchanged).toBe(true);
    expect(await hostCas()).toEqual(casBefore);
    await expectSignedByHostCas();
    const s = await lab.ssh('node1');
    expect(await remote(s, ['ls', '/var/lib/hardwire/pending-restart'])).toBe('');
    await s.close();
    const v = hardwire(['verify', '--inventory', inv, '--state-dir', state], {
      timeoutMs: 300_000,
    });
    expect(v.code, v.stderr.slice(-2000)).toBe(0);
    const { report } = check();
    const sched = report.certs.filter((c) => c.name === 'scheduler.conf');
    const operator = new X509Certificate(
      readFileSync(
        join(state, loadInventory(inv).cluster.name, 'pki', 'kubeconfig', 'scheduler.crt'),
      ),
    ).fingerprint256;
    expect(sched.map((c) => c.fingerprint)).toEqual([operator, operator]);
  }, 600_000);
});
