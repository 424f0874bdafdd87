// cluster.keyAlgorithm through the real CLI: every key and certificate of hosts/example.yaml's PKI,
// read back by openssl; certs check over the rendered host trees; real etcd and etcdctl on
// ECDSA certificates; and the refusal to switch algorithm under an existing CA.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, relative } from 'node:path';
import { hardwire } from './helpers/cli.ts';
import { tempDir } from './helpers/tmp.ts';
import { requireInputs, skipWithoutInputs } from './helpers/inputs.ts';
import { loadInventory } from '../core/inventory/load.ts';
import { CAS, allLeaves } from '../core/pki/table.ts';
import { issueLeaf, windowFor } from '../core/pki/issue.ts';
import { checkHosts, formatCheck, problems } from '../core/certs/check.ts';
import { binaryPath } from '../core/components/binaries/cache.ts';
import { versionsFor } from '../core/components/binaries/catalog.ts';
import type { ReadSession } from '../core/transport/index.ts';
import { repoRoot } from '../lib/paths.ts';

const EXAMPLE = join(repoRoot, 'hosts', 'example.yaml');

/** hosts/example.yaml with cluster.keyAlgorithm set (undefined: the default). */
function inventory(dir: string, alg?: string): string {
  const text = readFileSync(EXAMPLE, 'utf8');
  const path = join(dir, `inventory-${alg ?? 'default'}.yaml`);
  writeFileSync(
    path,
    alg ? text.replace(/^cluster:\n/m, `cluster:\n  keyAlgorithm: ${alg}\n`) : text,
  );
  return path;
}

function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile())
    .sort();
}

function openssl(args: string[], input?: string): string {
  const r = spawnSync('openssl', args, { encoding: 'utf8', input });
  expect(r.status, `openssl ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

/** A ReadSession over a rendered host tree: absolute paths in argv are read under root. */
function localSession(root: string): ReadSession {
  return {
    exec: async (argv: string[]) => {
      const r = spawnSync(
        argv[0]!,
        argv.slice(1).map((a) => (a.startsWith('/') ? join(root, a) : a)),
        { encoding: 'utf8' },
      );
      return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr.replaceAll(root, '') };
    },
  } as unknown as ReadSession;
}

const EXPECT: Record<string, RegExp[]> = {
  'RSA-2048': [/Public Key Algorithm: rsaEncryption/, /Public-Key: \(2048 bit\)/],
  'RSA-3072': [/Public Key Algorithm: rsaEncryption/, /Public-Key: \(3072 bit\)/],
  'ECDSA-P256': [/Public Key Algorithm: id-ecPublicKey/, /ASN1 OID: prime256v1/],
};
const SIGNATURE: Record<string, string> = {
  'RSA-2048': 'sha256WithRSAEncryption',
  'RSA-3072': 'sha256WithRSAEncryption',
  'ECDSA-P256': 'ecdsa-with-SHA256',
};

describe('cluster.keyAlgorithm', () => {
  const root = tempDir('hardwire-keyalg-');
  const states: Record<string, string> = {};

  beforeAll(() => {
    for (const alg of [undefined, 'RSA-3072', 'ECDSA-P256']) {
      const state = join(root, `state-${alg ?? 'default'}`);
      const r = hardwire(['render', '--inventory', inventory(root, alg), '--state-dir', state]);
      expect(r.code, r.stderr).toBe(0);
      expect(`${r.stdout}${r.stderr}`).not.toMatch(/PRIVATE KEY/);
      states[alg ?? 'RSA-2048'] = state;
    }
  }, 180_000);

  for (const alg of ['RSA-2048', 'RSA-3072', 'ECDSA-P256']) {
    it(`${alg}: every cert and key of the example PKI, read by openssl`, () => {
      const inv = loadInventory(inventory(root, alg === 'RSA-2048' ? undefined : alg));
      expect(inv.cluster.keyAlgorithm).toBe(alg);
      const pki = join(states[alg]!, 'demo', 'pki');
      const caFile = new Map(CAS.map((c) => [c.id, join(pki, `${c.file}.crt`)]));
      const certs = [
        ...CAS.map((c) => ({ file: `${c.file}`, ca: c.id })),
        ...allLeaves(inv).map((l) => ({ file: l.file, ca: l.ca })),
      ];
      // Every .crt the operator copy holds, each with its CA.
      expect(certs.map((c) => join(pki, `${c.file}.crt`)).sort()).toEqual(
        files(pki).filter((f) => f.endsWith('.crt')),
      );
      for (const { file, ca } of certs) {
        const crt = join(pki, `${file}.crt`);
        const key = join(pki, `${file}.key`);
        const text = openssl(['x509', '-in', crt, '-noout', '-text']);
        for (const re of EXPECT[alg]!) expect(text, file).toMatch(re);
        expect(text, file).toContain(`Signature Algorithm: ${SIGNATURE[alg]}`);
        expect(openssl(['verify', '-CAfile', caFile.get(ca)!, crt]), file).toBe(`${crt}: OK\n`);
        expect(openssl(['pkey', '-in', key, '-pubout']), file).toBe(
          openssl(['x509', '-in', crt, '-noout', '-pubkey']),
        );
      }
      // The service-account pair: same algorithm, the public half derived from the private one.
      const sa = join(pki, 'sa.key');
      expect(openssl(['pkey', '-in', sa, '-noout', '-text'])).toMatch(
        alg === 'ECDSA-P256'
          ? /ASN1 OID: prime256v1/
          : new RegExp(`Private-Key: \\(${alg.slice(4)} bit`),
      );
      expect(openssl(['pkey', '-in', sa, '-pubout'])).toBe(
        readFileSync(join(pki, 'sa.pub'), 'utf8'),
      );
      // Private material is 0600, in the operator copy and in each rendered host tree.
      const secret = files(states[alg]!).filter(
        (f) => /\.key$|\.conf$|encryption-config\.yaml$/.test(f) && !f.includes('/systemd/'),
      );
      expect(secret.length).toBeGreaterThan(certs.length);
      for (const f of secret)
        expect((statSync(f).mode & 0o777).toString(8), relative(root, f)).toBe('600');
    });
  }

  it('certs check over the rendered host trees reports each key algorithm and fails on a cert that is not the inventory one', async () => {
    const invPath = inventory(root, 'ECDSA-P256');
    const inv = loadInventory(invPath);
    const hostsDir = join(states['ECDSA-P256']!, 'demo', 'hosts');
    const sessions = new Map(inv.hosts.map((h) => [h.name, localSession(join(hostsDir, h.name))]));
    const clean = await checkHosts(inv, sessions);
    expect(clean.keyAlgorithm).toBe('ECDSA-P256');
    expect(clean.certs.length).toBeGreaterThan(20);
    for (const r of [...clean.certs, ...clean.cas])
      expect(r.keyAlgorithm, r.path).toBe('ECDSA-P256');
    expect(problems(clean)).toEqual([]);
    expect(formatCheck(clean).split('\n')[0]).toMatch(
      /^CERTIFICATE\s+HOST\s+EXPIRES\s+RESIDUAL TIME\s+CERTIFICATE AUTHORITY\s+KEY ALGORITHM\s+FILE$/,
    );

    // The same inventory read as RSA-3072: every row is a problem.
    const asRsa = { ...inv, cluster: { ...inv.cluster, keyAlgorithm: 'RSA-3072' as const } };
    const all = await checkHosts(asRsa, sessions);
    expect(problems(all).length).toBe(all.certs.length + all.cas.length);

    // One apiserver cert on cp-1 replaced by an RSA-2048 one from the same ECDSA CA: only that row.
    const spec = allLeaves(inv).find((l) => l.id === 'apiserver')!;
    const pki = join(states['ECDSA-P256']!, 'demo', 'pki');
    const ca = {
      certPem: readFileSync(join(pki, 'ca.crt'), 'utf8'),
      keyPem: readFileSync(join(pki, 'ca.key'), 'utf8'),
    };
    const rsa = await issueLeaf(spec, ca, windowFor(30), { alg: 'RSA-2048' });
    const target = join(hostsDir, 'cp-1', 'etc/kubernetes/pki/apiserver.crt');
    const original = readFileSync(target, 'utf8');
    writeFileSync(target, rsa.certPem);
    try {
      const mixed = await checkHosts(inv, sessions);
      const bad = problems(mixed);
      expect(bad.map((b) => `${b.name}@${b.host}`)).toEqual(['apiserver@cp-1']);
      expect(bad[0]).toMatchObject({
        status: 'ok',
        signedByHostCa: true,
        keyAlgorithm: 'RSA-2048',
      });
      const line = formatCheck(mixed)
        .split('\n')
        .find((l) => l.startsWith('apiserver ') && l.includes('cp-1'));
      expect(line).toContain('RSA-2048 (NOT ECDSA-P256)');
    } finally {
      writeFileSync(target, original);
    }
  });

  it('refuses to switch keyAlgorithm under an existing CA: one line, exit 2, nothing written', () => {
    const state = states['ECDSA-P256']!;
    const hash = () =>
      files(state).map(
        (f) =>
          `${relative(state, f)} ${createHash('sha256').update(readFileSync(f)).digest('hex')} ${statSync(f).mtimeMs}`,
      );
    const before = hash();
    for (const alg of ['RSA-3072', 'RSA-2048']) {
      const r = hardwire(['pki', '--inventory', inventory(root, alg), '--state-dir', state]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toEqual([
        `error: cluster.keyAlgorithm: is ${alg}, but the key of the existing ${join(state, 'demo', 'pki', 'ca.crt')} is ECDSA-P256; set cluster.keyAlgorithm: ECDSA-P256 to keep this cluster's PKI (hardwire never regenerates a CA), or use a new --state-dir for a new cluster`,
      ]);
    }
    expect(hash()).toEqual(before);
    // The inventory's own algorithm again: everything kept.
    const again = hardwire([
      'pki',
      '--inventory',
      inventory(root, 'ECDSA-P256'),
      '--state-dir',
      state,
    ]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout + again.stderr).not.toMatch(/^(created|reissued) /m);
  });
});

const ETCD = binaryPath('etcd', versionsFor().etcd);
const ETCDCTL = binaryPath('etcdctl', versionsFor().etcd);

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe('real etcd on ECDSA-P256 certificates', () => {
  let etcd: ChildProcess | undefined;
  afterAll(() => {
    if (etcd?.pid) etcd.kill('SIGKILL');
  });

  it.skipIf(skipWithoutInputs(ETCD, ETCDCTL))(
    'serves client-cert-auth TLS with the ECDSA server cert; etcdctl with the ECDSA healthcheck client cert puts and gets',
    async () => {
      requireInputs(ETCD, ETCDCTL);
      const root = tempDir('hardwire-keyalg-etcd-');
      const state = join(root, 'state');
      const r = hardwire([
        'pki',
        '--inventory',
        inventory(root, 'ECDSA-P256'),
        '--state-dir',
        state,
      ]);
      expect(r.code, r.stderr).toBe(0);
      const pki = join(state, 'demo', 'pki', 'etcd');
      expect(readFileSync(join(pki, 'cp-0', 'server.key'), 'utf8')).toMatch(
        /^-----BEGIN EC PRIVATE KEY-----/,
      );
      const [client, peer] = [await freePort(), await freePort()];
      const url = `https://127.0.0.1:${client}`;
      let log = '';
      etcd = spawn(
        ETCD,
        [
          '--name=cp-0',
          `--data-dir=${join(root, 'data')}`,
          `--listen-client-urls=${url}`,
          `--advertise-client-urls=${url}`,
          `--listen-peer-urls=http://127.0.0.1:${peer}`,
          `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
          `--initial-cluster=cp-0=http://127.0.0.1:${peer}`,
          `--cert-file=${join(pki, 'cp-0', 'server.crt')}`,
          `--key-file=${join(pki, 'cp-0', 'server.key')}`,
          `--trusted-ca-file=${join(pki, 'ca.crt')}`,
          '--client-cert-auth=true',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      etcd.stderr!.on('data', (b: Buffer) => (log += b.toString()));
      const ctl = (args: string[], cert = 'healthcheck-client') =>
        spawnSync(
          ETCDCTL,
          [
            `--endpoints=${url}`,
            `--cacert=${join(pki, 'ca.crt')}`,
            `--cert=${join(pki, `${cert}.crt`)}`,
            `--key=${join(pki, `${cert}.key`)}`,
            '--dial-timeout=2s',
            '--command-timeout=3s',
            ...args,
          ],
          { encoding: 'utf8' },
        );
      let health = ctl(['endpoint', 'health']);
      const deadline = Date.now() + 30_000;
      while (health.status !== 0 && Date.now() < deadline) {
        await new Promise((res) => setTimeout(res, 500));
        health = ctl(['endpoint', 'health']);
      }
      expect(health.status, `${health.stderr}\n${log.slice(-2000)}`).toBe(0);
      expect(ctl(['put', 'hardwire/keyalg', 'ECDSA-P256']).stdout.trim()).toBe('OK');
      expect(ctl(['get', '--print-value-only', 'hardwire/keyalg']).stdout.trim()).toBe(
        'ECDSA-P256',
      );
      // Client-cert auth is really on: no client cert, no answer.
      const anon = spawnSync(
        ETCDCTL,
        [
          `--endpoints=${url}`,
          `--cacert=${join(pki, 'ca.crt')}`,
          '--dial-timeout=2s',
          '--command-timeout=3s',
          'get',
          'x',
        ],
        { encoding: 'utf8' },
      );
      expect(anon.status).not.toBe(0);
      // The TLS session itself was ECDSA: etcd's certificate as the client saw it.
      const seen = spawnSync(
        'openssl',
        [
          's_client',
          '-connect',
          `127.0.0.1:${client}`,
          '-CAfile',
          join(pki, 'ca.crt'),
          '-cert',
          join(pki, 'healthcheck-client.crt'),
          '-key',
          join(pki, 'healthcheck-client.key'),
        ],
        { input: '', encoding: 'utf8' },
      );
      expect(seen.stdout).toMatch(/Peer signature type: ECDSA|Peer signing digest/);
      expect(seen.stdout).toMatch(/Verify return code: 0 \(ok\)/);
      etcd.kill('SIGTERM');
      await new Promise((res) => etcd!.once('exit', res));
      etcd = undefined;
    },
    120_000,
  );
});
