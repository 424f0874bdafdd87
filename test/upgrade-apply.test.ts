// upgrade apply (issue 24) on a real 3-host HA lab whose hosts are workers too: v1.36.3 → v1.37.2
// under a write load, read back from the hosts (binaries, running processes, systemd's journal) and
// from etcd itself, the kubelets and kube-proxies last, the probe Pods still Running and the Service
// found by DNS; then, on a freshly wired cluster, a flag that fails only on the second host stops the
// roll there and rolls that host back, and a re-run with the inventory fixed finishes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:https';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { hardwire } from './helpers/cli.ts';
import { mainProcess, unitStarts } from './helpers/unit-starts.ts';
import { hardwireAsync } from './helpers/cli-async.ts';
import { remote, wiredTestLab, type TestLab, type WiredLab } from './helpers/lab.ts';
import { startLoad } from '../harness/rolling-load.ts';
import {
  credsFromKubeconfig,
  kubeJson,
  kubeRequest,
  withServer,
  type KubeCreds,
} from '../core/transport/kube-api.ts';
import { loadValidInventory } from '../core/validate/inventory.ts';
import { binaryPath, sha256File } from '../core/components/binaries/cache.ts';
import { PINNED_KUBERNETES } from '../lib/constants.ts';
import { run } from '../lib/proc.ts';

let lab: TestLab;
let wired: WiredLab;
let inv: string;
let state: string;

const CP = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'];
/** What a worker runs from Kubernetes: upgraded last, after every control-plane instance. */
const NODE = ['kubelet', 'kube-proxy'] as const;
const TO = 'v1.37.2';

interface ApplyJson {
  steps: { host: string; restart: string[]; version: string }[];
  done: { host: string; restart: string[]; version: string; seconds: number }[];
  actions: { host: string; msg: string }[];
  snapshot: { file: string; revision: number } | null;
  durationsMs: Record<string, number>;
}

function inventoryWith(file: string, edit: (cluster: Record<string, unknown>) => void): string {
  const doc = parse(readFileSync(inv, 'utf8')) as { cluster: Record<string, unknown> };
  edit(doc.cluster);
  const out = join(lab.stateDir, file);
  writeFileSync(out, stringify(doc));
  return out;
}

/** On one host, read there: each binary's --version and each unit's running argv (/proc/<MainPID>/cmdline). */
async function hostVersions(
  host: string,
): Promise<{ versions: Record<string, string>; argv: Record<string, string[]> }> {
  const s = await lab.ssh(host);
  try {
    const versions: Record<string, string> = {};
    for (const b of ['etcd', 'etcdctl', ...CP.slice(1), ...NODE]) {
      const out = await remote(s, [
        'sh',
        '-c',
        `/usr/local/bin/${b} ${b === 'etcdctl' ? 'version' : '--version'} 2>&1`,
      ]);
      versions[b] = /(?:Kubernetes |etcd Version: |etcdctl version: )(\S+)/.exec(out)?.[1] ?? out;
    }
    const argv: Record<string, string[]> = {};
    for (const c of [...CP, ...NODE])
      argv[c] = (
        await remote(s, [
          'sh',
          '-c',
          `tr '\\0' '\\n' < /proc/$(systemctl show -p MainPID --value ${c}.service)/cmdline`,
        ])
      ).split('\n');
    return { versions, argv };
  } finally {
    await s.close();
  }
}

/** GET https://<member>:2379/version with the host's etcd CA and healthcheck-client cert: etcd's own answer. */
async function etcdVersion(
  host: string,
  address: string,
): Promise<{ etcdserver: string; etcdcluster: string }> {
  const s = await lab.ssh(host);
  const [ca, cert, key] = await Promise.all(
    ['ca.crt', 'healthcheck-client.crt', 'healthcheck-client.key'].map((f) =>
      s.readFile(`/etc/kubernetes/pki/etcd/${f}`),
    ),
  );
  await s.close();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: address,
        port: 2379,
        path: '/version',
        ca,
        cert,
        key,
        servername: address,
        timeout: 5000,
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => {
          body += d.toString();
        });
        res.on('end', () => {
          try {
            resolve(JSON.parse(body) as { etcdserver: string; etcdcluster: string });
          } catch (err) {
            reject(err as Error);
          }
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Each probe Pod and each CoreDNS Pod: name, uid, node, phase, through the API. */
async function probePods(creds: KubeCreds): Promise<string[]> {
  const out: string[] = [];
  for (const [ns, sel] of [
    ['hardwire-probes', 'app=hardwire-probe'],
    ['kube-system', 'k8s-app=kube-dns'],
  ] as const) {
    const r = await kubeJson<{
      items: {
        metadata: { name: string; uid: string };
        spec: { nodeName?: string };
        status: { phase?: string };
      }[];
    }>(creds, 'GET', `/api/v1/namespaces/${ns}/pods?labelSelector=${sel}`);
    out.push(
      ...r.json.items.map(
        (p) =>
          `${ns}/${p.metadata.name} ${p.metadata.uid} ${p.spec.nodeName ?? ''} ${p.status.phase ?? ''}`,
      ),
    );
  }
  return out.sort();
}

/** sha256 of every file under the paths wire writes on a host, read there. */
async function fileHashes(host: string): Promise<Map<string, string>> {
  const s = await lab.ssh(host);
  const out = await remote(s, [
    'sh',
    '-c',
    'find /usr/local/bin /etc/systemd/system /etc/kubernetes -xdev -type f -print0 | sort -z | xargs -0 sha256sum',
  ]);
  await s.close();
  return new Map(
    out.split('\n').map((l) => {
      const [h, p] = l.split(/\s+/);
      return [p!, h!] as const;
    }),
  );
}

beforeAll(async () => {
  wired = await wiredTestLab('w3w', 3, { workers: true });
  ({ lab, inv, state } = wired);
}, 900_000);

afterAll(async () => {
  await lab?.down();
});

describe('upgrade apply v1.36.3 → v1.37.2 on a 3-host HA lab, every host a worker', () => {
  it('--dry-run lists every write and restart, one host at a time, and writes nothing', async () => {
    const before = await fileHashes('node2');
    const r = hardwire(
      [
        'upgrade',
        'apply',
        '--to',
        TO,
        '--inventory',
        inv,
        '--state-dir',
        state,
        '--dry-run',
        '--json',
      ],
      { timeoutMs: 300_000 },
    );
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const doc = JSON.parse(r.stdout) as ApplyJson;
    const hosts = ['node1', 'node2', 'node3'];
    expect(doc.steps.map((s) => `${s.host} ${s.restart.join('+')} ${s.version}`)).toEqual([
      ...hosts.map((h) => `${h} etcd etcd v3.6.16`),
      ...hosts.map((h) => `${h} etcd etcd v3.7.0`),
      ...hosts.map((h) => `${h} kube-apiserver ${TO}`),
      ...hosts.map((h) => `${h} kube-controller-manager+kube-scheduler ${TO}`),
      ...hosts.map((h) => `${h} kubelet+kube-proxy ${TO}`),
    ]);
    expect(
      doc.actions
        .filter((a) => a.msg.startsWith('systemctl restart'))
        .map((a) => `${a.host} ${a.msg}`),
    ).toEqual([
      ...hosts.map((h) => `${h} systemctl restart etcd.service`),
      ...hosts.map((h) => `${h} systemctl restart etcd.service`),
      ...hosts.map((h) => `${h} systemctl restart kube-apiserver.service`),
      ...hosts.flatMap((h) => [
        `${h} systemctl restart kube-controller-manager.service`,
        `${h} systemctl restart kube-scheduler.service`,
      ]),
      ...hosts.flatMap((h) => [
        `${h} systemctl restart kubelet.service`,
        `${h} systemctl restart kube-proxy.service`,
      ]),
    ]);
    expect(doc.actions.some((a) => a.msg === 'write /usr/local/bin/kube-apiserver (changed)')).toBe(
      true,
    );
    expect(await fileHashes('node2')).toEqual(before);
  }, 300_000);

  it("rolls the cluster under a write load: every binary and argv at the target, etcd 3.7 by etcd, 0 writes lost, an apiserver always ready, kubelets and kube-proxies last by the hosts' journals, Pods Running and DNS answering, verify green", async () => {
    const creds = credsFromKubeconfig(
      join(state, loadValidInventory(inv).cluster.name, 'kubeconfigs', 'admin.conf'),
    );
    const pods = await probePods(creds);
    const load = await startLoad(
      creds,
      lab.info.hosts.map((h) => h.address),
      'upgrade-load',
    );
    const since = Date.now();
    const r = await hardwireAsync(
      ['upgrade', 'apply', '--to', TO, '--inventory', inv, '--state-dir', state, '--json'],
      { timeoutMs: 900_000 },
    );
    await new Promise((res) => setTimeout(res, 2000));
    const rep = await load.stop();
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    const doc = JSON.parse(r.stdout) as ApplyJson;
    console.log(
      `upgrade apply: ${doc.durationsMs.total} ms total; steps ${doc.done.map((d) => `${d.host} ${d.restart.join('+')} ${d.version} ${d.seconds}s`).join('; ')}`,
    );
    console.log(
      `load: sent ${rep.sent}, failed ${rep.failed}, acked ${rep.acked}, lost ${rep.lost.length}, longest with no ready apiserver ${rep.longestNoneMs} ms, most not ready at once ${rep.maxNotReady}`,
    );
    expect(doc.snapshot?.revision).toBeGreaterThan(0);
    expect(rep.acked).toBeGreaterThan(50);
    expect(rep.lost).toEqual([]);
    expect(rep.longestNoneMs).toBe(0);
    expect(rep.maxNotReady).toBeLessThanOrEqual(1);
    const targetSha = Object.fromEntries(
      await Promise.all(NODE.map(async (b) => [b, await sha256File(binaryPath(b, TO))] as const)),
    );
    const starts: Record<string, Record<string, number[]>> = {};
    for (const h of lab.info.hosts) {
      const { versions, argv } = await hostVersions(h.name);
      expect(versions, h.name).toEqual({
        etcd: '3.7.0',
        etcdctl: '3.7.0',
        'kube-apiserver': TO,
        'kube-controller-manager': TO,
        'kube-scheduler': TO,
        kubelet: TO,
        'kube-proxy': TO,
      });
      for (const c of [...CP, ...NODE])
        expect(argv[c]![0], `${h.name} ${c}`).toBe(`/usr/local/bin/${c}`);
      expect(argv.kubelet, h.name).toEqual(
        expect.arrayContaining([
          '--config=/var/lib/kubelet/config.yaml',
          `--hostname-override=${h.name}`,
          `--node-ip=${h.address}`,
        ]),
      );
      expect(argv['kube-proxy']!.slice(1), h.name).toEqual([
        '--config=/var/lib/kube-proxy/config.conf',
      ]);
      expect(await etcdVersion(h.name, h.address), h.name).toMatchObject({
        etcdserver: '3.7.0',
        etcdcluster: '3.7.0',
      });
      const s = await lab.ssh(h.name);
      try {
        // The running process is the v1.37.2 binary built here, not the old inode of a replaced file.
        for (const c of NODE)
          expect(await mainProcess(s, c), `${h.name} ${c}`).toMatchObject({
            exe: `/usr/local/bin/${c}`,
            sha256: targetSha[c],
          });
        starts[h.name] = await unitStarts(s, [...CP, ...NODE], since);
      } finally {
        await s.close();
      }
    }
    // The order, from systemd's own "Started" entries on each host: every control-plane unit
    // restarted during the apply, every kubelet and kube-proxy too, and each of those only after the
    // last control-plane start on any host (the version-skew policy: kubelet and kube-proxy not newer than any apiserver).
    const fmt = (us: number) => new Date(us / 1000).toISOString().slice(11, 23);
    console.log(
      `unit starts during apply: ${Object.entries(starts)
        .map(
          ([h, u]) =>
            `${h} ${Object.entries(u)
              .map(([c, t]) => `${c} ${t.map(fmt).join(',')}`)
              .join('; ')}`,
        )
        .join(' | ')}`,
    );
    for (const [h, u] of Object.entries(starts))
      for (const c of [...CP, ...NODE])
        expect(u[c]!.length, `${h} ${c} started during the apply`).toBeGreaterThan(0);
    const lastCp = Math.max(...Object.values(starts).flatMap((u) => CP.flatMap((c) => u[c]!)));
    for (const [h, u] of Object.entries(starts)) {
      for (const c of NODE)
        expect(
          Math.min(...u[c]!),
          `${h} ${c} first started at ${fmt(Math.min(...u[c]!))}, the control plane last at ${fmt(lastCp)}`,
        ).toBeGreaterThan(lastCp);
    }
    // The workload outlived it: the same probe Pods (same uid, Running, on their node), and each finds the Service by DNS.
    expect(await probePods(creds)).toEqual(pods);
    const { cluster } = loadValidInventory(inv);
    const name = `probe.hardwire-probes.svc.${cluster.dnsDomain}`;
    for (const h of lab.info.hosts) {
      const r = await run(
        binaryPath('kubectl', PINNED_KUBERNETES),
        [
          '--kubeconfig',
          join(state, cluster.name, 'kubeconfigs', 'admin.conf'),
          '-n',
          'hardwire-probes',
          'exec',
          `probe-${h.name}`,
          '--',
          'nslookup',
          name,
        ],
        { step: 'kubectl exec', allowFail: true, timeoutMs: 60_000 },
      );
      expect(r.code, `nslookup ${name} in probe-${h.name}: ${r.stdout}${r.stderr}`).toBe(0);
      expect(r.stdout, h.name).toMatch(
        new RegExp(`Name:\\s*${name.replace(/\./g, '\\.')}\\s*\\nAddress:\\s*10\\.`),
      );
    }
    const at = inventoryWith('at-target.yaml', (c) => {
      c.kubernetesVersion = TO;
    });
    const v = hardwire(['verify', '--inventory', at, '--state-dir', state, '--json'], {
      timeoutMs: 300_000,
    });
    expect(v.code, v.stderr.slice(-2000)).toBe(0);
    expect((JSON.parse(v.stdout) as { ok: boolean }).ok).toBe(true);
    // Safe to run again, from either inventory: nothing is left, nothing restarts.
    for (const file of [inv, at]) {
      const again = hardwire(
        ['upgrade', 'apply', '--to', TO, '--inventory', file, '--state-dir', state, '--json'],
        { timeoutMs: 300_000 },
      );
      expect(again.code, again.stderr.slice(-2000)).toBe(0);
      expect((JSON.parse(again.stdout) as ApplyJson).steps).toEqual([]);
    }
  }, 900_000);

  it('a flag that fails on the second host stops the roll there and rolls it back; the first stays upgraded and serving; a re-run with it removed finishes', async () => {
    // A fresh v1.36.3 cluster on the same hosts: the wired lab's snapshot restored (else a teardown and a wire).
    await wired.reset();
    // --admission-control-config-file names a file that only node1 has: node2's v1.37.2 apiserver exits.
    const cfg = '/etc/kubernetes/upgrade-admission.yaml';
    const s1 = await lab.ssh('node1');
    await s1.exec([
      'sh',
      '-c',
      `printf 'apiVersion: apiserver.config.k8s.io/v1\\nkind: AdmissionConfiguration\\nplugins: []\\n' > ${cfg}`,
    ]);
    await s1.close();
    const bad = inventoryWith('bad.yaml', (c) => {
      c.extraArgs = { 'kube-apiserver': { 'admission-control-config-file': cfg } };
    });
    const before = await fileHashes('node2');
    const r = hardwire(
      [
        'upgrade',
        'apply',
        '--to',
        TO,
        '--inventory',
        bad,
        '--state-dir',
        state,
        '--gate-timeout',
        '45',
      ],
      { timeoutMs: 900_000 },
    );
    expect(r.code).toBe(1);
    const line = r.stderr.split('\n').find((l) => l.startsWith('error:')) ?? '';
    expect(line).toMatch(/gate "kube-apiserver: .*" failed on node2 at v1\.37\.2/);
    expect(line).toMatch(/node2 was rolled back/);
    expect(r.stderr).toContain('upgrade-admission.yaml'); // the real error, from node2's journal
    // node2: every file as before but etcd's (its hops were done), read on the host.
    const after = await fileHashes('node2');
    const etcdFiles = [
      '/usr/local/bin/etcd',
      '/usr/local/bin/etcdctl',
      '/usr/local/bin/etcdutl',
      '/etc/systemd/system/etcd.service',
    ];
    const changed = [...new Set([...before.keys(), ...after.keys()])].filter(
      (p) => before.get(p) !== after.get(p),
    );
    expect(changed.filter((p) => !etcdFiles.includes(p))).toEqual([]);
    const n1 = await hostVersions('node1');
    const n2 = await hostVersions('node2');
    const n3 = await hostVersions('node3');
    expect(n1.versions['kube-apiserver']).toBe(TO);
    expect(n1.argv['kube-apiserver']).toContain(`--admission-control-config-file=${cfg}`);
    expect(n2.versions['kube-apiserver']).toBe('v1.36.3');
    expect(n2.argv['kube-apiserver']).not.toContain(`--admission-control-config-file=${cfg}`);
    expect(n3.versions['kube-apiserver']).toBe('v1.36.3');
    // The roll stopped in the control plane: no kubelet or kube-proxy was touched.
    for (const n of [n1, n2, n3])
      expect([n.versions.kubelet, n.versions['kube-proxy']]).toEqual(['v1.36.3', 'v1.36.3']);
    const creds = credsFromKubeconfig(
      join(state, loadValidInventory(inv).cluster.name, 'kubeconfigs', 'admin.conf'),
    );
    for (const h of lab.info.hosts.slice(0, 2)) {
      expect(
        (await kubeRequest(withServer(creds, `https://${h.address}:6443`), 'GET', '/readyz'))
          .status,
        h.name,
      ).toBe(200);
    }
    // The inventory fixed: the re-run reads what runs, finishes node2 and node3, and re-renders node1 without the flag.
    const fixed = hardwire(
      ['upgrade', 'apply', '--to', TO, '--inventory', inv, '--state-dir', state, '--json'],
      { timeoutMs: 900_000 },
    );
    expect(fixed.code, fixed.stderr.slice(-3000)).toBe(0);
    const doc = JSON.parse(fixed.stdout) as ApplyJson;
    expect(doc.done.filter((d) => d.restart.includes('etcd'))).toEqual([]);
    for (const h of lab.info.hosts) {
      const { versions, argv } = await hostVersions(h.name);
      expect(
        [versions['kube-apiserver'], versions.kubelet, versions['kube-proxy']],
        h.name,
      ).toEqual([TO, TO, TO]);
      expect(argv['kube-apiserver'], h.name).not.toContain(
        `--admission-control-config-file=${cfg}`,
      );
    }
  }, 900_000);
});
