// compare's kubelet certificates (issue 23), with no lab: certificates made here by openssl, the
// files laid out as each plane has them, read through a local stand-in for the SSH session. Whether
// the serving cert is self-signed or CA-signed is checked against `openssl verify`, not the code.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, runSync } from '../lib/proc.ts';
import { readKubeletCerts } from '../harness/planes/kubelet-certs.ts';
import { emptyPlane } from '../harness/planes/types.ts';
import type { Session } from '../core/transport/index.ts';

const ssl = (dir: string, args: string[]) =>
  runSync('openssl', args, { step: 'openssl', cwd: dir, env: process.env });
const local = {
  exec: (argv: string[]) =>
    run(argv[0]!, argv.slice(1), { step: 'exec', env: process.env, allowFail: true }),
  readFile: async (p: string) => readFileSync(p),
} as unknown as Session;

/** A key and a cert with `subj`, signed by `ca` (or by itself). */
function cert(
  dir: string,
  name: string,
  subj: string,
  ca?: string,
  ext = 'basicConstraints=critical,CA:FALSE',
) {
  ssl(dir, [
    'req',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-subj',
    subj,
    '-out',
    `${name}.csr`,
  ]);
  writeFileSync(join(dir, `${name}.ext`), `${ext}\n`);
  ssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-days',
    '365',
    '-extfile',
    `${name}.ext`,
    '-out',
    `${name}.crt`,
    ...(ca
      ? ['-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial']
      : ['-key', `${name}.key`]),
  ]);
}

describe('kubelet certs (openssl-made files, no lab)', () => {
  it('reads the client cert the kubeconfig names and tells a self-signed serving cert from a CA-signed one as openssl verify does', async () => {
    const d = mkdtempSync(join(tmpdir(), 'hardwire-kcerts-'));
    try {
      const CA = 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign';
      cert(d, 'ca', '/CN=kubernetes', undefined, CA);
      cert(d, 'client', '/O=system:nodes/CN=system:node:node1', 'ca');
      cert(d, 'served', '/CN=system:node:node1', 'ca');
      // The kubelet's own default: a <host>-ca@<ts> CA and a leaf it signs, both in kubelet.crt.
      cert(d, 'kca', '/CN=node1-ca@1700000000', undefined, CA);
      cert(d, 'self', '/CN=node1@1700000000', 'kca');
      writeFileSync(
        join(d, 'kubelet.crt'),
        readFileSync(join(d, 'self.crt'), 'utf8') + readFileSync(join(d, 'kca.crt'), 'utf8'),
      );
      // kubelet-client-current.pem: the cert and its key in one file, as the kubelet rotates it.
      writeFileSync(
        join(d, 'client.pem'),
        readFileSync(join(d, 'client.crt'), 'utf8') + readFileSync(join(d, 'client.key'), 'utf8'),
      );
      writeFileSync(
        join(d, 'kubelet.conf'),
        `clusters:\n- cluster:\n    certificate-authority: ${d}/ca.crt\nusers:\n- user:\n    client-certificate: ${d}/client.pem\n    client-key: ${d}/client.pem\n`,
      );
      const verifies = (caFile: string, file: string) =>
        runSync('openssl', ['verify', '-CAfile', caFile, file], {
          step: 'verify',
          env: process.env,
          allowFail: true,
        }).code === 0;

      // kubeadm-like: serving cert from --cert-dir (the self-signed default), no flag on the apiserver.
      const a = emptyPlane('kubeadm', '', true);
      a.node = {
        host: 'node1',
        reasons: {},
        components: {
          kubelet: {
            argv: ['kubelet', `--kubeconfig=${d}/kubelet.conf`, `--cert-dir=${d}`],
            argvSource: 'test',
          },
        },
      };
      const ka = await readKubeletCerts(a, local, {
        argv: ['kube-apiserver', '--secure-port=6443'],
        source: 'test',
      });
      expect(ka.serving.file).toBe(`${d}/kubelet.crt`);
      expect(ka.serving.selfSigned).toBe(verifies(`${d}/kubelet.crt`, `${d}/kubelet.crt`));
      expect(ka.serving.signedByClusterCa).toBe(verifies(`${d}/ca.crt`, `${d}/kubelet.crt`));
      expect(ka.serving).toMatchObject({
        selfSigned: true,
        signedByClusterCa: false,
        issuer: 'CN=node1-ca@1700000000',
      });
      expect(ka.apiserverKubeletCa).toBeNull();
      expect(ka.verdict).toMatch(
        /self-signed.*only because --kubelet-certificate-authority is absent/,
      );
      expect(ka.client).toMatchObject({
        file: `${d}/client.pem`,
        embedded: false,
        cn: 'system:node:node1',
        o: ['system:nodes'],
        issuer: 'CN=kubernetes',
      });
      expect(a.certs.map((c) => c.role)).toEqual(['kubelet-client', 'kubelet-serving']);

      // hardwire-like: tlsCertFile in the config, signed by the cluster CA, the apiserver checks it.
      const h = emptyPlane('hardwire', '', true);
      h.node = {
        host: 'node1',
        reasons: {},
        components: {
          kubelet: {
            argv: ['kubelet', `--kubeconfig=${d}/kubelet.conf`],
            argvSource: 'test',
            config: `tlsCertFile: ${d}/served.crt\n`,
          },
        },
      };
      const hk = await readKubeletCerts(h, local, {
        argv: ['kube-apiserver', `--kubelet-certificate-authority=${d}/ca.crt`],
        source: 'test',
      });
      expect(hk.serving.selfSigned).toBe(verifies(`${d}/served.crt`, `${d}/served.crt`));
      expect(hk.serving.signedByClusterCa).toBe(verifies(`${d}/ca.crt`, `${d}/served.crt`));
      expect(hk.serving).toMatchObject({ selfSigned: false, signedByClusterCa: true });
      expect(hk.verdict).toBe(
        `serving cert signed by the cluster CA; the apiserver verifies it against ${d}/ca.crt (--kubelet-certificate-authority)`,
      );
      expect(JSON.stringify([ka, hk, a.certs, h.certs])).not.toMatch(/PRIVATE KEY/);
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});
