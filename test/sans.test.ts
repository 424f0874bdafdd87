// The apiserver's SANs on a real 1-host lab wired with a non-default service CIDR, DNS domain and
// apiServerEndpoint (a DNS name that resolves, for wire, to the lab host). Everything is read from
// what the apiserver serves and from the host's files, and checked by TLS clients that are not
// hardwire's: Node's tls with its own hostname check, and curl on the host.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { X509Certificate } from 'node:crypto';
import { connect, type PeerCertificate } from 'node:tls';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { testLab, remote, type TestLab } from './helpers/lab.ts';
import { hardwireResolving, hostsFileWith } from './helpers/resolve.ts';
import { credsFromKubeconfig, kubeJson, withServer } from '../core/transport/kube-api.ts';

const SERVICE_CIDR = '10.32.0.0/16';
const SERVICE_IP = '10.32.0.1';
const DOMAIN = 'hw.internal';
const SVC_NAME = `kubernetes.default.svc.${DOMAIN}`;
const ENDPOINT = 'api.sanstest.hardwire.test';

let lab: TestLab;
let addr: string;
let state: string;
let ca: string;

/** A TLS handshake to the apiserver with `servername`, verified by Node against the cluster CA. */
function handshake(servername: string): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: addr, port: 6443, servername, ca }, () => {
      const peer = sock.getPeerCertificate();
      sock.destroy();
      resolve(peer);
    });
    sock.setTimeout(10_000, () => sock.destroy(new Error('TLS handshake timed out')));
    sock.on('error', reject);
  });
}

beforeAll(async () => {
  lab = await testLab('sanstest', 1);
  addr = lab.info.hosts[0]!.address;
  state = join(lab.stateDir, 'state');
  const d = parse(readFileSync(lab.info.inventory, 'utf8')) as { cluster: Record<string, unknown> };
  Object.assign(d.cluster, {
    serviceCIDR: SERVICE_CIDR,
    dnsDomain: DOMAIN,
    apiServerEndpoint: `${ENDPOINT}:6443`,
  });
  const inv = join(lab.stateDir, 'inv-sans.yaml');
  writeFileSync(inv, stringify(d));
  // The endpoint name resolves to node1 for wire (its own /etc/hosts) and on node1 itself.
  const hostsFile = hostsFileWith(join(lab.stateDir, 'hosts'), { [ENDPOINT]: addr });
  const s = await lab.ssh('node1');
  await s.exec(['sh', '-c', `echo "${addr} ${ENDPOINT}" >> /etc/hosts`]);
  await s.close();
  const w = hardwireResolving(hostsFile, ['wire', '--inventory', inv, '--state-dir', state], {
    timeoutMs: 900_000,
  });
  if (w.code !== 0) {
    await lab.down().catch(() => undefined);
    throw new Error(`wire exited ${w.code}:\n${w.stderr.slice(-3000)}`);
  }
  const h = await lab.ssh('node1');
  ca = await remote(h, ['cat', '/etc/kubernetes/pki/ca.crt']); // the CA on the host, not the operator's copy
  await h.close();
});

afterAll(async () => {
  await lab?.down();
});

describe('apiserver SANs with a non-default service CIDR, DNS domain and endpoint', () => {
  it("the served cert is the host's file and has exactly the expected SANs", async () => {
    const s = await lab.ssh('node1');
    const onHost = new X509Certificate(
      await remote(s, ['cat', '/etc/kubernetes/pki/apiserver.crt']),
    );
    await s.close();
    const served = new X509Certificate((await handshake(SVC_NAME)).raw);
    expect(served.fingerprint256).toBe(onHost.fingerprint256);
    expect(served.subjectAltName!.split(', ').sort()).toEqual(
      [
        'DNS:kubernetes',
        'DNS:kubernetes.default',
        'DNS:kubernetes.default.svc',
        `DNS:${SVC_NAME}`,
        'DNS:localhost',
        'DNS:node1',
        `DNS:${ENDPOINT}`,
        'IP Address:127.0.0.1',
        `IP Address:${SERVICE_IP}`,
        `IP Address:${addr}`,
      ].sort(),
    );
  });

  it(`${SVC_NAME}, the service IP and the endpoint verify against the served cert; the default domain and IP do not`, async () => {
    // Node's own hostname check (checkServerIdentity) on the handshake: it throws on a mismatch.
    await expect(handshake(SVC_NAME)).resolves.toBeDefined();
    await expect(handshake(ENDPOINT)).resolves.toBeDefined();
    await expect(handshake('kubernetes.default.svc.cluster.local')).rejects.toThrow(
      /Hostname\/IP does not match certificate's altnames/,
    );
    const served = new X509Certificate((await handshake(SVC_NAME)).raw);
    expect(served.checkHost(SVC_NAME)).toBe(SVC_NAME);
    expect(served.checkIP(SERVICE_IP)).toBe(SERVICE_IP);
    expect(served.checkIP('10.96.0.1')).toBeUndefined();

    // curl (OpenSSL) on the host, each name resolved to the apiserver: exit 0 means the chain and the name
    // verified; 60 is curl's "peer certificate cannot be authenticated".
    const s = await lab.ssh('node1');
    const curl = async (url: string, ...how: string[]) => {
      const r = await s.exec(
        [
          'curl',
          '-sS',
          '-o',
          '/dev/null',
          '-w',
          '%{http_code}',
          '--cacert',
          '/etc/kubernetes/pki/ca.crt',
          ...how,
          url,
        ],
        { allowFail: true },
      );
      return `${r.code} ${r.stdout.trim()} ${r.stderr.trim()}`;
    };
    expect(
      await curl(`https://${SVC_NAME}:6443/livez`, '--resolve', `${SVC_NAME}:6443:127.0.0.1`),
    ).toMatch(/^0 (200|401) $/);
    expect(
      await curl(`https://${SERVICE_IP}/livez`, '--connect-to', `${SERVICE_IP}:443:127.0.0.1:6443`),
    ).toMatch(/^0 (200|401) $/);
    expect(await curl(`https://${ENDPOINT}:6443/livez`)).toMatch(/^0 (200|401) $/); // through node1's /etc/hosts
    expect(
      await curl(
        'https://kubernetes.default.svc.cluster.local:6443/livez',
        '--resolve',
        'kubernetes.default.svc.cluster.local:6443:127.0.0.1',
      ),
    ).toMatch(/^60 000 curl: \(60\)/);
    await s.close();
  });

  it('the apiserver runs with that service range: the kubernetes Service has the first service IP', async () => {
    const admin = join(state, 'sanstest', 'kubeconfigs', 'admin.conf');
    expect(readFileSync(admin, 'utf8')).toContain(`server: https://${ENDPOINT}:6443\n`);
    const creds = withServer(credsFromKubeconfig(admin), `https://${addr}:6443`);
    const svc = await kubeJson<{ spec: { clusterIP: string } }>(
      creds,
      'GET',
      '/api/v1/namespaces/default/services/kubernetes',
    );
    expect(svc.json.spec.clusterIP).toBe(SERVICE_IP);
  });
});
