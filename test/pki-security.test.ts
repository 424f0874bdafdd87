// Security properties of the PKI and the rendered host trees (issue 39), read back from the disk
// with openssl and stat, never through the code's own tables: files are classified by what they hold.
// No key material reaches an assertion message: keys are compared by hash.
import { beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { parse } from 'yaml';
import {
  addKey,
  dropOldKeys,
  encryptionConfig,
  encryptionKeys,
  newSecret,
  promoteKey,
  rotationStage,
  writePrefix,
  type EncryptionKey,
} from '../core/pki/encryption.ts';
import { hardwire } from './helpers/cli.ts';
import { tempDir } from './helpers/tmp.ts';
import { loadInventory } from '../core/inventory/load.ts';
import { renderHostTree } from '../core/render/host-tree.ts';
import { planHost } from '../core/plan/build.ts';

const HOSTS = join(import.meta.dirname, '..', 'hosts');
// Three control-plane hosts; one control-plane host and two workers (kubelet and kube-proxy identities).
const EXAMPLE = join(HOSTS, 'example.yaml');
const WORKERS = join(HOSTS, 'example-workers.yaml');

const sha = (b: string | Buffer) => createHash('sha256').update(b).digest('hex');
const modeOf = (p: string) => statSync(p).mode & 0o777;
const openssl = (args: string[]) =>
  execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

function walk(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** What makes a file private, judged by its content alone; undefined for a public file. */
function privateKind(content: Buffer): string | undefined {
  const t = content.toString('latin1');
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(t)) return 'private key';
  // A kubeconfig's credentials: a client key, or a token or password should one ever be added.
  if (/^kind:\s*Config\s*$/m.test(t) && /^\s*(client-key-data|client-key|token|password):/m.test(t))
    return 'kubeconfig with credentials';
  if (/^kind:\s*EncryptionConfiguration\s*$/m.test(t)) return 'EncryptionConfiguration';
  return undefined;
}

/**
 * Every private file under dir, by content, with its mode. Names are a cross-check: a .key or an
 * encryption config that does not classify is reported too. (Not every .conf: kube-proxy's
 * config.conf is a public KubeProxyConfiguration.)
 */
function privateFiles(dir: string): { path: string; kind: string; mode: number }[] {
  return walk(dir).flatMap((p) => {
    const kind =
      privateKind(readFileSync(p)) ??
      (/\.key$|encryption-config\.yaml$/.test(p) ? 'named like a secret' : undefined);
    return kind ? [{ path: p.slice(dir.length + 1), kind, mode: modeOf(p) }] : [];
  });
}

/** "<path> <octal mode>" of each file that is not 0600. */
const notPrivate = (files: { path: string; mode: number }[]) =>
  files.filter((f) => f.mode !== 0o600).map((f) => `${f.path} ${f.mode.toString(8)}`);

function run(args: string[]): ReturnType<typeof hardwire> {
  const r = hardwire(args);
  expect(r.code, r.stderr).toBe(0);
  return r;
}

// a: `pki` for the workers inventory; b: `render` for the three-host one (a second, independent PKI).
let a: string;
let b: string;
beforeAll(() => {
  a = tempDir();
  b = tempDir();
  run(['pki', '--inventory', WORKERS, '--state-dir', a]);
  run(['render', '--inventory', EXAMPLE, '--state-dir', b]);
});

describe('encryption at rest', () => {
  interface Provider {
    secretbox?: { keys?: { name?: string; secret?: string }[] };
    identity?: object;
  }
  const load = (p: string) =>
    parse(readFileSync(p, 'utf8')) as {
      apiVersion: string;
      kind: string;
      resources: { resources: string[]; providers: Provider[] }[];
    };

  it('one 32-byte secretbox key for Secrets, then identity (so Secrets stored before encryption can still be read); a new key per PKI', () => {
    const keys: string[] = [];
    for (const dir of [a, b]) {
      const doc = load(join(dir, 'demo', 'pki', 'encryption-config.yaml'));
      expect([doc.apiVersion, doc.kind]).toEqual([
        'apiserver.config.k8s.io/v1',
        'EncryptionConfiguration',
      ]);
      expect(doc.resources.map((r) => r.resources)).toEqual([['secrets']]);
      // The first provider encrypts every write; the later ones only decrypt.
      expect(doc.resources[0]!.providers.map((p) => Object.keys(p))).toEqual([
        ['secretbox'],
        ['identity'],
      ]);
      const ks = doc.resources[0]!.providers[0]!.secretbox!.keys!;
      expect(ks.map((k) => k.name)).toEqual(['key1']);
      const secret = ks[0]!.secret!;
      const raw = Buffer.from(secret, 'base64');
      // Canonical base64 (what the apiserver decodes) of exactly 32 bytes: secretbox's key size.
      expect(raw.toString('base64') === secret, 'the secret is canonical base64').toBe(true);
      expect(raw.length).toBe(32);
      keys.push(sha(raw));
    }
    expect(new Set(keys).size, 'two PKIs, two keys').toBe(2);
  });

  it("rotation's stages, as the docs order them: new key second, then first, then alone; an aescbc cluster moves to secretbox", () => {
    const old: EncryptionKey[] = [{ provider: 'aescbc', name: 'key1', secret: newSecret() }];
    const added = addKey(old, 'A'.repeat(43) + '=');
    expect(added.map((k) => `${k.provider}/${k.name}`)).toEqual(['aescbc/key1', 'secretbox/key2']);
    expect(rotationStage(old)).toBe('idle');
    expect(rotationStage(added)).toBe('added');
    const promoted = promoteKey(added);
    expect(promoted.map((k) => k.name)).toEqual(['key2', 'key1']);
    expect(rotationStage(promoted)).toBe('promoted');
    expect(writePrefix(promoted)).toBe('k8s:enc:secretbox:v1:key2:');
    expect(dropOldKeys(promoted).map((k) => k.name)).toEqual(['key2']);
    // The config round-trips, each provider's keys in order, identity last.
    const text = encryptionConfig(promoted);
    expect(encryptionKeys(text)).toEqual(promoted);
    const doc = parse(text) as { resources: { providers: Record<string, unknown>[] }[] };
    expect(doc.resources[0]!.providers.map((p) => Object.keys(p)[0])).toEqual([
      'secretbox',
      'aescbc',
      'identity',
    ]);
    // Two secretbox keys are one provider entry with both, the newer one first once promoted.
    const sb = promoteKey(addKey(dropOldKeys(promoted)));
    expect(sb.map((k) => k.name)).toEqual(['key3', 'key2']);
    expect(
      (
        parse(encryptionConfig(sb)) as {
          resources: { providers: Record<string, { keys: { name: string }[] }>[] }[];
        }
      ).resources[0]!.providers[0]!.secretbox!.keys.map((k) => k.name),
    ).toEqual(['key3', 'key2']);
  });

  it('each control-plane host gets the same config, and the apiserver reads it there', () => {
    const want = sha(readFileSync(join(b, 'demo', 'pki', 'encryption-config.yaml')));
    for (const h of ['cp-0', 'cp-1', 'cp-2']) {
      const host = join(b, 'demo', 'hosts', h);
      expect(sha(readFileSync(join(host, 'etc/kubernetes/encryption-config.yaml'))), h).toBe(want);
      expect(readFileSync(join(host, 'etc/systemd/system/kube-apiserver.service'), 'utf8')).toMatch(
        /^\s+--encryption-provider-config=\/etc\/kubernetes\/encryption-config\.yaml \\$/m,
      );
    }
  });
});

describe('private files are 0600', () => {
  it('after pki: every private key, kubeconfig and the encryption config', () => {
    const found = privateFiles(join(a, 'demo'));
    expect(notPrivate(found)).toEqual([]);
    // The classifier saw every kind, and the files issue 39 names.
    expect(new Set(found.map((f) => f.kind))).toEqual(
      new Set(['private key', 'kubeconfig with credentials', 'EncryptionConfiguration']),
    );
    for (const p of [
      'pki/ca.key',
      'pki/sa.key',
      'pki/etcd/ca.key',
      'pki/encryption-config.yaml',
      'kubeconfigs/admin.conf',
      'kubeconfigs/w-1/kubelet.conf',
      'pki/kubelet/w-2/kubelet-server.key',
    ]) {
      expect(
        found.map((f) => f.path),
        p,
      ).toContain(p);
    }
  });

  it('after render: the same in every host tree, and in the mode the push writes', () => {
    run(['render', '--inventory', WORKERS, '--state-dir', a]);
    for (const dir of [a, b]) {
      const found = privateFiles(join(dir, 'demo'));
      expect.soft(notPrivate(found)).toEqual([]);
      expect(found.filter((f) => f.path.startsWith('hosts/')).length).toBeGreaterThan(10);
    }
    for (const p of [
      'cp-0/etc/kubernetes/pki/sa.key',
      'cp-0/etc/kubernetes/encryption-config.yaml',
      'cp-0/etc/kubernetes/pki/ca.key',
      'w-1/etc/kubernetes/kubelet.conf',
    ]) {
      expect(
        privateFiles(join(a, 'demo', 'hosts')).map((f) => f.path),
        p,
      ).toContain(p);
    }
    // What wire pushes: the host tree's mode field, carried into the plan's changes (FileChange.mode,
    // which push hands to writeFilesAtomic). The mapping to WantedFile is apply/phases/binaries.ts's.
    for (const [inventory, dir] of [
      [WORKERS, a],
      [EXAMPLE, b],
    ] as const) {
      const inv = loadInventory(inventory);
      for (const host of inv.hosts) {
        const tree = renderHostTree(inv, host, join(dir, 'demo', 'pki'));
        const priv = tree.files.filter((f) => privateKind(f.content));
        expect(priv.length, host.name).toBeGreaterThan(0);
        expect
          .soft(
            priv
              .filter((f) => f.mode !== 0o600)
              .map((f) => `${host.name}:${f.path} ${f.mode.toString(8)}`),
          )
          .toEqual([]);
        const plan = planHost(
          {
            host: host.name,
            components: tree.components,
            files: tree.files.map((f) => ({
              path: f.path,
              mode: f.mode,
              sha256: f.sha256,
              readBy: f.readBy,
              kind: 'file' as const,
            })),
          },
          { host: host.name, hashes: new Map(), units: new Map() },
        );
        const privPaths = new Set(priv.map((f) => f.path));
        const changes = plan.changes.filter((c) => privPaths.has(c.path));
        expect(changes.length, host.name).toBe(privPaths.size);
        expect
          .soft(
            changes
              .filter((c) => c.mode !== 0o600)
              .map((c) => `${host.name}:${c.path} ${c.mode.toString(8)}`),
          )
          .toEqual([]);
        // The local mirror shows the mode that is pushed.
        for (const f of tree.files)
          expect
            .soft(modeOf(join(dir, 'demo', 'hosts', host.name, f.path)), `${host.name}:${f.path}`)
            .toBe(f.mode);
      }
    }
  });
});

/** Serial, SHA-256 fingerprint, subject, issuer and basic constraints of a PEM certificate, as openssl reads them. */
function x509(pem: string): {
  serial: string;
  fingerprint: string;
  subject: string;
  issuer: string;
  bc: string;
} {
  const out = execFileSync(
    'openssl',
    [
      'x509',
      '-noout',
      '-serial',
      '-fingerprint',
      '-sha256',
      '-subject',
      '-issuer',
      '-nameopt',
      'RFC2253',
      '-ext',
      'basicConstraints',
    ],
    { input: pem, encoding: 'utf8' },
  );
  const field = (re: RegExp) => re.exec(out)?.[1]?.trim() ?? '';
  return {
    serial: field(/^serial=(.+)$/m),
    fingerprint: field(/Fingerprint=(.+)$/m),
    subject: field(/^subject=(.*)$/m),
    issuer: field(/^issuer=(.*)$/m),
    bc: field(/X509v3 Basic Constraints:.*\n\s*(.+)/),
  };
}

/** Every certificate of a cluster: each .crt under pki/ and each one embedded in a kubeconfig, by fingerprint. */
function allCerts(dir: string): Map<string, { where: string; c: ReturnType<typeof x509> }> {
  const out = new Map<string, { where: string; c: ReturnType<typeof x509> }>();
  const add = (where: string, pem: string) => {
    const c = x509(pem);
    if (!out.has(c.fingerprint)) out.set(c.fingerprint, { where, c });
  };
  for (const p of walk(join(dir, 'demo', 'pki')).filter((x) =>
    readFileSync(x, 'latin1').includes('-----BEGIN CERTIFICATE-----'),
  ))
    add(p, readFileSync(p, 'utf8'));
  for (const p of walk(join(dir, 'demo', 'kubeconfigs'))) {
    const doc = parse(readFileSync(p, 'utf8')) as {
      users: { user: { 'client-certificate-data': string } }[];
    };
    add(p, Buffer.from(doc.users[0]!.user['client-certificate-data'], 'base64').toString());
  }
  return out;
}

describe('certificates', () => {
  it('leaves are CA:FALSE, the three self-signed CAs CA:TRUE (critical), and no two certificates share a serial', () => {
    const serials: string[] = [];
    for (const dir of [a, b]) {
      const certs = [...allCerts(dir).values()];
      expect(certs.length).toBeGreaterThan(15);
      // A CA here is a self-signed certificate; everything else is a leaf.
      const cas = certs.filter(({ c }) => c.subject === c.issuer);
      expect(cas.map(({ c }) => c.subject).sort()).toEqual([
        'CN=etcd-ca',
        'CN=front-proxy-ca',
        'CN=kubernetes',
      ]);
      for (const { where, c } of certs) {
        expect(c.bc, where.slice(dir.length)).toBe(c.subject === c.issuer ? 'CA:TRUE' : 'CA:FALSE');
      }
      const text = openssl([
        'x509',
        '-in',
        join(dir, 'demo', 'pki', 'apiserver.crt'),
        '-noout',
        '-text',
      ]);
      expect(text).toMatch(/X509v3 Basic Constraints: critical\n\s+CA:FALSE\n/);
      serials.push(...certs.map(({ c }) => c.serial));
    }
    // Across both clusters too: serials are random.
    expect(serials.every((s) => /^[0-9A-F]+$/.test(s))).toBe(true);
    expect(serials.length - new Set(serials).size, 'certificates sharing a serial').toBe(0);
  });
});

describe('a leaf that no longer fits is reissued, with the reason', () => {
  /** One openssl-made leaf for the spec's subject and usage, with `key`, signed by caCrt/caKey. */
  function signLeaf(
    work: string,
    key: string,
    cn: string,
    eku: string,
    caCrt: string,
    caKey: string,
    days: number,
  ): string {
    const ext = join(work, `${cn}.ext`);
    writeFileSync(
      ext,
      `basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=${eku}\n`,
    );
    const csr = join(work, `${cn}.csr`);
    const crt = join(work, `${cn}.crt`);
    openssl(['req', '-new', '-key', key, '-subj', `/CN=${cn}`, '-out', csr]);
    openssl([
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      caCrt,
      '-CAkey',
      caKey,
      '-set_serial',
      `0x${randomBytes(8).toString('hex')}`,
      '-days',
      String(days),
      '-extfile',
      ext,
      '-out',
      crt,
    ]);
    return readFileSync(crt, 'utf8');
  }

  it('near expiry, another CA, a key that does not match, a key that does not parse: each reissued, reported, and only those', () => {
    const dir = tempDir();
    cpSync(a, dir, { recursive: true });
    const pki = join(dir, 'demo', 'pki');
    const work = tempDir();
    const f = (rel: string) => join(pki, rel);
    const other = join(work, 'other-ca');
    openssl([
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${other}.key`,
      '-out',
      `${other}.crt`,
      '-subj',
      '/CN=front-proxy-ca',
      '-days',
      '3650',
    ]);
    const garbage = `-----BEGIN RSA PRIVATE KEY-----\n${randomBytes(48).toString('base64')}\n-----END RSA PRIVATE KEY-----\n`;
    openssl([
      'genpkey',
      '-algorithm',
      'RSA',
      '-pkeyopt',
      'rsa_keygen_bits:2048',
      '-out',
      join(work, 'foreign.key'),
    ]);
    // Each tampering leaves everything else about the leaf right, so its reason is the only one.
    const cases = [
      {
        file: 'apiserver-kubelet-client',
        reason: /^it expires \S+, within 30 days$/,
        crt: () =>
          signLeaf(
            work,
            f('apiserver-kubelet-client.key'),
            'kube-apiserver-kubelet-client',
            'clientAuth',
            f('ca.crt'),
            f('ca.key'),
            10,
          ),
        key: () => readFileSync(f('apiserver-kubelet-client.key'), 'utf8'),
      },
      {
        file: 'front-proxy-client',
        reason: /^it is not signed by the current CA$/,
        crt: () =>
          signLeaf(
            work,
            f('front-proxy-client.key'),
            'front-proxy-client',
            'clientAuth',
            `${other}.crt`,
            `${other}.key`,
            365,
          ),
        key: () => readFileSync(f('front-proxy-client.key'), 'utf8'),
      },
      {
        file: 'etcd/healthcheck-client',
        reason: /^the key file does not match the certificate$/,
        crt: () => readFileSync(f('etcd/healthcheck-client.crt'), 'utf8'),
        key: () => readFileSync(join(work, 'foreign.key'), 'utf8'),
      },
      {
        file: 'kubeconfig/scheduler',
        reason: /^the key file does not parse$/,
        crt: () => readFileSync(f('kubeconfig/scheduler.crt'), 'utf8'),
        key: () => garbage,
      },
    ];
    const caOf: Record<string, string> = {
      'front-proxy-client': 'front-proxy-ca.crt',
      'etcd/healthcheck-client': 'etcd/ca.crt',
    };
    const before = new Map(
      cases.map((c) => [c.file, x509(readFileSync(f(`${c.file}.crt`), 'utf8')).fingerprint]),
    );
    const tampered = cases.map((c) => ({ ...c, crtPem: c.crt(), keyPem: c.key() }));
    const tamper = () => {
      for (const t of tampered) {
        writeFileSync(f(`${t.file}.crt`), t.crtPem);
        writeFileSync(f(`${t.file}.key`), t.keyPem, { mode: 0o600 });
      }
    };
    tamper();

    const r = run(['pki', '--inventory', WORKERS, '--state-dir', dir, '--json']);
    const events = JSON.parse(r.stdout).events as {
      file: string;
      action: string;
      reasons: string[];
    }[];
    for (const t of tampered) {
      const e = events.find((x) => x.file === `${t.file}.crt`)!;
      expect(e.action, t.file).toBe('reissued');
      expect(e.reasons.length, `${t.file}: ${e.reasons.join('; ')}`).toBe(1);
      expect(e.reasons[0], t.file).toMatch(t.reason);
      const now = x509(readFileSync(f(`${t.file}.crt`), 'utf8'));
      expect(now.fingerprint, `${t.file} changed`).not.toBe(before.get(t.file));
      expect(now.fingerprint, `${t.file} is not the tampered one`).not.toBe(
        x509(t.crtPem).fingerprint,
      );
      expect(
        openssl(['verify', '-CAfile', f(caOf[t.file] ?? 'ca.crt'), f(`${t.file}.crt`)]),
        t.file,
      ).toContain(': OK');
      expect(
        new Date(
          openssl(['x509', '-in', f(`${t.file}.crt`), '-noout', '-enddate'])
            .trim()
            .slice('notAfter='.length),
        ).getTime(),
        t.file,
      ).toBeGreaterThan(Date.now() + 300 * 86_400_000);
      // The new key is the new cert's: their public halves, by hash.
      expect(
        sha(openssl(['pkey', '-in', f(`${t.file}.key`), '-pubout'])),
        `${t.file} key matches`,
      ).toBe(sha(openssl(['x509', '-in', f(`${t.file}.crt`), '-noout', '-pubkey'])));
      expect(modeOf(f(`${t.file}.key`)), t.file).toBe(0o600);
    }
    const others = events.filter((e) => !tampered.some((t) => e.file === `${t.file}.crt`));
    expect(others.filter((e) => e.action !== 'kept').map((e) => e.file)).toEqual([]);
    // The kubeconfig carries the reissued client cert.
    const sched = parse(
      readFileSync(join(dir, 'demo', 'kubeconfigs', 'scheduler.conf'), 'utf8'),
    ) as { users: { user: { 'client-certificate-data': string } }[] };
    expect(sha(Buffer.from(sched.users[0]!.user['client-certificate-data'], 'base64'))).toBe(
      sha(readFileSync(f('kubeconfig/scheduler.crt'))),
    );

    // The same tampering again, without --json: the log says what and why.
    tamper();
    const log = run(['pki', '--inventory', WORKERS, '--state-dir', dir]);
    for (const t of tampered) {
      const line = log.stdout
        .split('\n')
        .concat(log.stderr.split('\n'))
        .find((l) => l.startsWith(`reissued ${t.file}.crt `));
      expect(line, t.file).toBeDefined();
      expect(/\((.+)\)$/.exec(line!)?.[1], t.file).toMatch(t.reason);
    }
    expect(log.stdout + log.stderr).not.toMatch(/PRIVATE KEY/);
  });
});

describe('a drifted mode is repaired, the content kept', () => {
  it("every private file chmod'ed 0644 is 0600 after the next pki (state) and render (host trees), byte for byte the same", () => {
    const dir = tempDir();
    cpSync(a, dir, { recursive: true });
    run(['render', '--inventory', WORKERS, '--state-dir', dir]);
    const root = join(dir, 'demo');
    const files = privateFiles(root).map((x) => join(root, x.path));
    expect(files.filter((p) => p.includes('/hosts/')).length).toBeGreaterThan(10);
    const hashes = new Map(files.map((p) => [p, sha(readFileSync(p))]));
    for (const p of files) chmodSync(p, 0o644);
    const r = run(['pki', '--inventory', WORKERS, '--state-dir', dir, '--json']);
    expect(
      (JSON.parse(r.stdout).events as { action: string }[]).filter((e) => e.action !== 'kept'),
    ).toEqual([]);
    const state = files.filter((p) => !p.includes('/hosts/'));
    expect(state.filter((p) => modeOf(p) !== 0o600).map((p) => p.slice(root.length + 1))).toEqual(
      [],
    );
    run(['render', '--inventory', WORKERS, '--state-dir', dir]);
    expect(files.filter((p) => modeOf(p) !== 0o600).map((p) => p.slice(root.length + 1))).toEqual(
      [],
    );
    // No silent regeneration: the same bytes (compared by hash).
    expect(
      files
        .filter((p) => sha(readFileSync(p)) !== hashes.get(p))
        .map((p) => p.slice(root.length + 1)),
    ).toEqual([]);
  });
});
