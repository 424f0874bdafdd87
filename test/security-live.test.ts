// Security properties read on a wired host (issue 39), on the shared 1-host wired lab ("w1"),
// restored from its snapshot: the evidence is read here, over SSH and through the API, never from a
// report of the code under test.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { hardwire } from './helpers/cli.ts';
import { remote, wiredTestLab, type WiredLab } from './helpers/lab.ts';
import { credsFromKubeconfig, kubeJson } from '../core/transport/kube-api.ts';
import { AUDIT_LOG_PATH } from '../core/components/models/audit-policy.ts';

let w: WiredLab;

async function onHost(argv: string[]): Promise<string> {
  const s = await w.lab.ssh('node1');
  try {
    return await remote(s, argv);
  } finally {
    await s.close();
  }
}

beforeAll(async () => {
  w = await wiredTestLab('w1', 1);
}, 900_000);

afterAll(async () => {
  await w?.lab.down();
});

describe('security properties on a wired host', () => {
  it('every private file on the host (keys, kubeconfigs with a client key, the encryption config), found by its content, is 0600', async () => {
    // Found by content with grep on the host, not from hardwire's own table, so a new private file cannot escape.
    const found = await onHost([
      'sh',
      '-c',
      "grep -rlsIE -e 'PRIVATE KEY' -e 'client-key(-data)?:' -e 'kind: EncryptionConfiguration' /etc/kubernetes /etc/etcd /var/lib/hardwire /var/lib/kubelet /var/lib/kube-proxy /etc/hardwire 2>/dev/null | sort -u | xargs -r stat -c '%a %n'",
    ]);
    const rows = found
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [mode, ...p] = l.split(' ');
        return { mode: mode!, path: p.join(' ') };
      });
    // The CAs' and leaves' keys, sa.key, admin and component kubeconfigs and the encryption config at least.
    expect(rows.length).toBeGreaterThan(10);
    expect(rows.map((r) => r.path)).toEqual(expect.arrayContaining(['/etc/kubernetes/pki/sa.key']));
    expect(rows.some((r) => /encryption/i.test(r.path))).toBe(true);
    expect(rows.filter((r) => r.mode !== '600').map((r) => `${r.mode} ${r.path}`)).toEqual([]);
  });

  it('a Secret written through the API with a random value is in the audit log by name, and its value nowhere', async () => {
    const admin = credsFromKubeconfig(join(w.state, 'w1', 'kubeconfigs', 'admin.conf'));
    const name = `hw-audit-${randomBytes(4).toString('hex')}`;
    const value = randomBytes(24).toString('hex');
    const b64 = Buffer.from(value).toString('base64');
    const r = await kubeJson(admin, 'POST', '/api/v1/namespaces/default/secrets', {
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { token: value } },
    });
    expect(r.status).toBe(201);
    // The update path too: a body that carries the value again.
    await kubeJson(admin, 'PUT', `/api/v1/namespaces/default/secrets/${name}`, {
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name },
        data: { token: b64, again: b64 },
      },
    });
    // The audit backend writes in batches: wait until the create is in the log, then grep for the value.
    let byName = '0';
    for (let i = 0; i < 40 && Number(byName) < 2; i++) {
      byName = await onHost([
        'sh',
        '-c',
        `grep -c -- '${name}' ${AUDIT_LOG_PATH}* 2>/dev/null | awk -F: '{n+=$NF} END {print n+0}'`,
      ]);
      if (Number(byName) < 2) await new Promise((res) => setTimeout(res, 500));
    }
    expect(Number(byName)).toBeGreaterThanOrEqual(2);
    const withValue = await onHost([
      'sh',
      '-c',
      `grep -c -e '${value}' -e '${b64}' ${AUDIT_LOG_PATH}* 2>/dev/null | awk -F: '{n+=$NF} END {print n+0}'`,
    ]);
    expect(withValue).toBe('0');
  });

  it('the apiserver serves TLS 1.2 with ECDHE+AEAD ciphers only, and TLS 1.3: openssl on the host, the client offering what the server must refuse', async () => {
    // -cipher …:@SECLEVEL=0 lets openssl itself offer TLS 1.1 and CBC suites, so a refusal is the
    // server's: its alert comes back ("alert handshake failure", "alert protocol version").
    const hello = (...args: string[]) =>
      onHost([
        'sh',
        '-c',
        `openssl s_client -connect 127.0.0.1:6443 ${args.join(' ')} </dev/null 2>&1; echo "exit $?"`,
      ]);
    const cbc = await hello('-tls1_2', '-cipher', "'ECDHE-RSA-AES128-SHA:@SECLEVEL=0'");
    expect(cbc).toMatch(/alert handshake failure/);
    expect(cbc).toMatch(/exit [1-9]/);
    const old = await hello('-tls1_1', '-cipher', "'DEFAULT:@SECLEVEL=0'");
    expect(old).toMatch(/alert protocol version/);
    expect(old).toMatch(/exit [1-9]/);
    const gcm = await hello('-tls1_2', '-cipher', 'ECDHE-RSA-AES128-GCM-SHA256');
    expect(gcm).toMatch(/Cipher is ECDHE-RSA-AES128-GCM-SHA256/);
    expect(gcm).toMatch(/exit 0$/);
    expect(await hello('-tls1_3')).toMatch(/New, TLSv1\.3, Cipher is TLS_/);
  });

  it('anonymous requests reach the health endpoints only: /livez, /readyz and /healthz answer, /version and /api are 401; with the admin cert /version answers', async () => {
    const code = (path: string, ...auth: string[]) =>
      onHost([
        'curl',
        '-s',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code}',
        '--cacert',
        '/etc/kubernetes/pki/ca.crt',
        ...auth,
        `https://127.0.0.1:6443${path}`,
      ]);
    const anon = Object.fromEntries(
      await Promise.all(
        [
          '/livez',
          '/readyz',
          '/healthz',
          '/version',
          '/api',
          '/.well-known/openid-configuration',
        ].map(async (p) => [p, await code(p)] as const),
      ),
    );
    expect(anon).toEqual({
      '/livez': '200',
      '/readyz': '200',
      '/healthz': '200',
      '/version': '401',
      '/api': '401',
      '/.well-known/openid-configuration': '401',
    });
    // The same path with a client certificate: the 401 above is the anonymous rule, not the path.
    // The admin pair is decoded on the host, so no key passes through this process.
    const dir = (await onHost(['mktemp', '-d'])).trim();
    try {
      await onHost([
        'sh',
        '-c',
        `umask 077; for k in certificate key; do sed -n "s/^ *client-$k-data: //p" /etc/kubernetes/admin.conf | base64 -d > ${dir}/$k; done`,
      ]);
      expect(await code('/version', '--cert', `${dir}/certificate`, '--key', `${dir}/key`)).toBe(
        '200',
      );
    } finally {
      await onHost(['rm', '-rf', dir]);
    }
  });

  it('a flag value with $, %, a quote and a space reaches the process unchanged (/proc/<pid>/cmdline), escaped in the unit on the host', async () => {
    // ${HOME} expands anywhere in a word ($HOME only as a word of its own), %h is the home specifier.
    const value = 'hw${HOME}%h"q s';
    const doc = parse(readFileSync(w.inv, 'utf8')) as {
      cluster: { extraArgs?: Record<string, Record<string, string>> };
    };
    doc.cluster.extraArgs = {
      ...(doc.cluster.extraArgs ?? {}),
      'kube-apiserver': { 'external-hostname': value },
    };
    const inv = join(w.lab.stateDir, 'inventory-escape.yaml');
    writeFileSync(inv, stringify(doc));
    const x = hardwire(['wire', '--inventory', inv, '--state-dir', w.state], {
      timeoutMs: 600_000,
    });
    expect(x.code, x.stderr.slice(-2000)).toBe(0);
    const pid = await onHost(['systemctl', 'show', '-p', 'MainPID', '--value', 'kube-apiserver']);
    expect(Number(pid)).toBeGreaterThan(1);
    const argv = (await onHost(['sh', '-c', `tr '\\0' '\\n' < /proc/${pid}/cmdline`])).split('\n');
    expect(argv).toContain(`--external-hostname=${value}`);
    const unit = await onHost(['cat', '/etc/systemd/system/kube-apiserver.service']);
    // In the unit, escaped for systemd: $$ and %% (else $HOME and the %h specifier expand), the quote escaped inside quotes.
    expect(unit).toContain('--external-hostname="hw$${HOME}%%h\\"q s"');
  });
});
