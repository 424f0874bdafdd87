// `hardwire encryption rotate` on the shared 3-host wired lab (w3), restored from its snapshot. The
// evidence is read here: each Secret's raw value in etcd with etcdctl (its key prefix), each Secret's
// data through the API, and the encryption config on every host, compared by key name and the
// sha256 of each key (no key is printed).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { parse } from 'yaml';
import { hardwire } from './helpers/cli.ts';
import { remote, wiredTestLab, type TestLab } from './helpers/lab.ts';
import { credsFromKubeconfig, kubeJson, type KubeCreds } from '../core/transport/kube-api.ts';
import { loadInventory } from '../core/inventory/load.ts';

let lab: TestLab;
let inv: string;
let state: string;
let creds: KubeCreds;
const NS = `rotate-${randomBytes(3).toString('hex')}`;
const values = new Map<string, string>();

const ETCDCTL = (hosts: TestLab['info']['hosts']) => [
  '/usr/local/bin/etcdctl',
  `--endpoints=${hosts.map((h) => `https://${h.address}:2379`).join(',')}`,
  '--cacert=/etc/kubernetes/pki/etcd/ca.crt',
  '--cert=/etc/kubernetes/pki/etcd/healthcheck-client.crt',
  '--key=/etc/kubernetes/pki/etcd/healthcheck-client.key',
];

/** Every Secret in etcd: its key and the first bytes of its stored value (the encryption prefix). */
async function storedPrefixes(): Promise<Map<string, string>> {
  const s = await lab.ssh('node1');
  try {
    const out = await remote(s, [
      ...ETCDCTL(lab.info.hosts),
      'get',
      '/registry/secrets/',
      '--prefix',
      '-w',
      'json',
    ]);
    const kvs = (JSON.parse(out) as { kvs?: { key: string; value: string }[] }).kvs ?? [];
    return new Map(
      kvs.map((kv) => {
        const raw = Buffer.from(kv.value, 'base64');
        const prefix = /^k8s:enc:[a-z]+:v1:[^:]+:/.exec(raw.subarray(0, 64).toString('latin1'));
        return [Buffer.from(kv.key, 'base64').toString(), prefix ? prefix[0] : '(plaintext)'];
      }),
    );
  } finally {
    await s.close();
  }
}

/** Each host's encryption config: its key names in order, and each key's sha256. */
async function hostKeys(): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const h of lab.info.hosts) {
    const s = await lab.ssh(h.name);
    try {
      const doc = parse(await remote(s, ['cat', '/etc/kubernetes/encryption-config.yaml'])) as {
        resources: { providers: Record<string, { keys?: { name: string; secret: string }[] }>[] }[];
      };
      out[h.name] = doc.resources[0]!.providers.flatMap((p) =>
        Object.entries(p).flatMap(([kind, body]) =>
          (body.keys ?? []).map(
            (k) =>
              `${kind}/${k.name} ${createHash('sha256').update(k.secret).digest('hex').slice(0, 16)}`,
          ),
        ),
      );
    } finally {
      await s.close();
    }
  }
  return out;
}

beforeAll(async () => {
  ({ lab, inv, state } = await wiredTestLab('w3', 3));
  creds = credsFromKubeconfig(
    join(state, loadInventory(inv).cluster.name, 'kubeconfigs', 'admin.conf'),
  );
  await kubeJson(creds, 'POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
  });
  for (let i = 0; i < 5; i++) {
    const v = randomBytes(12).toString('hex');
    values.set(`s${i}`, v);
    await kubeJson(creds, 'POST', `/api/v1/namespaces/${NS}/secrets`, {
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: `s${i}` }, stringData: { v } },
    });
  }
}, 900_000);

afterAll(async () => {
  await lab?.down();
});

describe('hardwire encryption rotate on a live 3-host cluster', () => {
  it('every Secret is stored under the new secretbox key, none is lost, and only the new key is left on every host', async () => {
    const before = await storedPrefixes();
    const keysBefore = await hostKeys();
    const mine = [...values.keys()].map((n) => `/registry/secrets/${NS}/${n}`);
    for (const k of mine) expect(before.get(k), k).toBe('k8s:enc:secretbox:v1:key1:');
    expect(new Set(Object.values(keysBefore).map((k) => k.join()))).toHaveProperty('size', 1);
    expect(keysBefore.node1!.map((k) => k.split(' ')[0])).toEqual(['secretbox/key1']);

    const r = hardwire(
      ['encryption', 'rotate', '--inventory', inv, '--state-dir', state, '--json'],
      {
        timeoutMs: 1_200_000,
      },
    );
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const report = JSON.parse(r.stdout) as { from: string[]; to: string[]; rewritten: number };
    expect([report.from, report.to]).toEqual([['secretbox/key1'], ['secretbox/key2']]);

    // etcd: the same Secrets, each under key2 now.
    const after = await storedPrefixes();
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    expect([...new Set(after.values())]).toEqual(['k8s:enc:secretbox:v1:key2:']);
    expect(report.rewritten).toBe(before.size);
    // The API: each Secret's data as written.
    for (const [name, v] of values) {
      const { json } = await kubeJson<{ data: { v: string } }>(
        creds,
        'GET',
        `/api/v1/namespaces/${NS}/secrets/${name}`,
      );
      expect(Buffer.from(json.data.v, 'base64').toString(), name).toBe(v);
    }
    // Every host: key2 alone, the same key everywhere, and not the old one.
    const keysAfter = await hostKeys();
    expect(new Set(Object.values(keysAfter).map((k) => k.join()))).toHaveProperty('size', 1);
    expect(keysAfter.node1!.map((k) => k.split(' ')[0])).toEqual(['secretbox/key2']);
    expect(keysAfter.node1![0]!.split(' ')[1]).not.toBe(keysBefore.node1![0]!.split(' ')[1]);
    // And the cluster still passes verify (its smoke test writes a Secret and reads its prefix).
    const v = hardwire(['verify', '--inventory', inv, '--state-dir', state], {
      timeoutMs: 600_000,
    });
    expect(v.code, v.stderr.slice(-2000)).toBe(0);
    expect(v.stdout + v.stderr).toContain('etcd holds k8s:enc:secretbox:v1:key2:');
  });
});
