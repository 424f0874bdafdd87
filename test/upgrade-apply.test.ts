// upgrade apply (issue 24) on a real 3-host HA lab: v1.36.3 → v1.37.2 under a write load, read
// back from the hosts and from etcd itself; then, on a freshly wired cluster, a flag that fails
// only on the second host stops the roll there and rolls that host back, and a re-run with the
// inventory fixed finishes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:https';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { hardwire } from './helpers/cli.ts';
import { hardwireAsync } from './helpers/cli-async.ts';
import { remote, wiredTestLab, type TestLab } from './helpers/lab.ts';
import { startLoad } from '../harness/rolling-load.ts';
import { credsFromKubeconfig, kubeRequest, withServer } from '../core/transport/kube-api.ts';
import { loadValidInventory } from '../core/validate/inventory.ts';

let lab: TestLab;
let inv: string;
let state: string;

const CP = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'];
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
async function hostVersions(host: string): Promise<{ versions: Record<string, string>; argv: Record<string, string[]> }> {
  const s = await lab.ssh(host);
  try {
    const versions: Record<string, string> = {};
    for (const b of ['etcd', 'etcdctl', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler']) {
      const out = await remote(s, ['sh', '-c', `/usr/local/bin/${b} ${b === 'etcdctl' ? 'version' : '--version'} 2>&1`]);
      versions[b] = /(?:Kubernetes |etcd Version: |etcdctl version: )(\S+)/.exec(out)?.[1] ?? out;
    }
    const argv: Record<string, string[]> = {};
    for (const c of CP) argv[c] = (await remote(s, ['sh', '-c', `tr '\\0' '\\n' < /proc/$(systemctl show -p MainPID --value ${c}.service)/cmdline`])).split('\n');
    return { versions, argv };
  } finally {
    await s.close();
  }
}

/** GET https://<member>:2379/version with the host's etcd CA and healthcheck-client cert: etcd's own answer. */
async function etcdVersion(host: string, address: string): Promise<{ etcdserver: string; etcdcluster: string }> {
  const s = await lab.ssh(host);
  const [ca, cert, key] = await Promise.all(['ca.crt', 'healthcheck-client.crt', 'healthcheck-client.key'].map((f) => s.readFile(`/etc/kubernetes/pki/etcd/${f}`)));
  await s.close();
  return new Promise((resolve, reject) => {
    const req = request({ host: address, port: 2379, path: '/version', ca, cert, key, servername: address, timeout: 5000 }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => { body += d.toString(); });
      res.on('end', () => { try { resolve(JSON.parse(body) as { etcdserver: string; etcdcluster: string }); } catch (err) { reject(err as Error); } });
    });
    req.on('error', reject);
    req.end();
  });
}

/** sha256 of every file under the paths wire writes on a host, read there. */
async function fileHashes(host: string): Promise<Map<string, string>> {
  const s = await lab.ssh(host);
  const out = await remote(s, ['sh', '-c', 'find /usr/local/bin /etc/systemd/system /etc/kubernetes -xdev -type f -print0 | sort -z | xargs -0 sha256sum']);
  await s.close();
  return new Map(out.split('\n').map((l) => { const [h, p] = l.split(/\s+/); return [p!, h!] as const; }));
}

beforeAll(async () => {
  ({ lab, inv, state } = await wiredTestLab('upapply', 3));
}, 900_000);

afterAll(async () => {
  await lab?.down();
});

describe('upgrade apply v1.36.3 → v1.37.2 on a 3-host HA lab', () => {
  it('--dry-run lists every write and restart, one host at a time, and writes nothing', async () => {
    const before = await fileHashes('node2');
    const r = hardwire(['upgrade', 'apply', '--to', TO, '--inventory', inv, '--state-dir', state, '--dry-run', '--json'], { timeoutMs: 300_000 });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const doc = JSON.parse(r.stdout) as ApplyJson;
    const hosts = ['node1', 'node2', 'node3'];
    expect(doc.steps.map((s) => `${s.host} ${s.restart.join('+')} ${s.version}`)).toEqual([
      ...hosts.map((h) => `${h} etcd etcd v3.6.16`), ...hosts.map((h) => `${h} etcd etcd v3.7.0`),
      ...hosts.map((h) => `${h} kube-apiserver ${TO}`), ...hosts.map((h) => `${h} kube-controller-manager+kube-scheduler ${TO}`),
    ]);
    expect(doc.actions.filter((a) => a.msg.startsWith('systemctl restart')).map((a) => `${a.host} ${a.msg}`)).toEqual([
      ...hosts.map((h) => `${h} systemctl restart etcd.service`), ...hosts.map((h) => `${h} systemctl restart etcd.service`),
      ...hosts.map((h) => `${h} systemctl restart kube-apiserver.service`),
      ...hosts.flatMap((h) => [`${h} systemctl restart kube-controller-manager.service`, `${h} systemctl restart kube-scheduler.service`]),
    ]);
    expect(doc.actions.some((a) => a.msg === 'write /usr/local/bin/kube-apiserver (changed)')).toBe(true);
    expect(await fileHashes('node2')).toEqual(before);
  }, 300_000);

  it('rolls the cluster under a write load: every binary and argv at the target, etcd 3.7 by etcd, 0 writes lost, an apiserver always ready, verify green', async () => {
    const creds = credsFromKubeconfig(join(state, loadValidInventory(inv).cluster.name, 'kubeconfigs', 'admin.conf'));
    const load = await startLoad(creds, lab.info.hosts.map((h) => h.address), 'upgrade-load');
    const r = await hardwireAsync(['upgrade', 'apply', '--to', TO, '--inventory', inv, '--state-dir', state, '--json'], { timeoutMs: 900_000 });
    await new Promise((res) => setTimeout(res, 2000));
    const rep = await load.stop();
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    const doc = JSON.parse(r.stdout) as ApplyJson;
    console.log(`upgrade apply: ${doc.durationsMs.total} ms total; steps ${doc.done.map((d) => `${d.host} ${d.restart.join('+')} ${d.version} ${d.seconds}s`).join('; ')}`);
    console.log(`load: sent ${rep.sent}, failed ${rep.failed}, acked ${rep.acked}, lost ${rep.lost.length}, longest with no ready apiserver ${rep.longestNoneMs} ms, most not ready at once ${rep.maxNotReady}`);
    expect(doc.snapshot?.revision).toBeGreaterThan(0);
    expect(rep.acked).toBeGreaterThan(50);
    expect(rep.lost).toEqual([]);
    expect(rep.longestNoneMs).toBe(0);
    expect(rep.maxNotReady).toBeLessThanOrEqual(1);
    for (const h of lab.info.hosts) {
      const { versions, argv } = await hostVersions(h.name);
      expect(versions, h.name).toEqual({ etcd: '3.7.0', etcdctl: '3.7.0', 'kube-apiserver': TO, 'kube-controller-manager': TO, 'kube-scheduler': TO });
      for (const c of CP) expect(argv[c]![0], `${h.name} ${c}`).toBe(`/usr/local/bin/${c}`);
      expect(await etcdVersion(h.name, h.address), h.name).toMatchObject({ etcdserver: '3.7.0', etcdcluster: '3.7.0' });
    }
    const at = inventoryWith('at-target.yaml', (c) => { c.kubernetesVersion = TO; });
    const v = hardwire(['verify', '--inventory', at, '--state-dir', state, '--json'], { timeoutMs: 300_000 });
    expect(v.code, v.stderr.slice(-2000)).toBe(0);
    expect((JSON.parse(v.stdout) as { ok: boolean }).ok).toBe(true);
    // Safe to run again, from either inventory: nothing is left, nothing restarts.
    for (const file of [inv, at]) {
      const again = hardwire(['upgrade', 'apply', '--to', TO, '--inventory', file, '--state-dir', state, '--json'], { timeoutMs: 300_000 });
      expect(again.code, again.stderr.slice(-2000)).toBe(0);
      expect((JSON.parse(again.stdout) as ApplyJson).steps).toEqual([]);
    }
  }, 900_000);

  it('a flag that fails on the second host stops the roll there and rolls it back; the first stays upgraded and serving; a re-run with it removed finishes', async () => {
    // A fresh v1.36.3 cluster on the same hosts.
    const td = hardwire(['teardown', '--inventory', inv, '--state-dir', state, '--purge-data'], { timeoutMs: 300_000 });
    expect(td.code, td.stderr.slice(-2000)).toBe(0);
    const w = hardwire(['wire', '--inventory', inv, '--state-dir', state], { timeoutMs: 600_000 });
    expect(w.code, w.stderr.slice(-2000)).toBe(0);
    // --admission-control-config-file names a file that only node1 has: node2's v1.37.2 apiserver exits.
    const cfg = '/etc/kubernetes/upgrade-admission.yaml';
    const s1 = await lab.ssh('node1');
    await s1.exec(['sh', '-c', `printf 'apiVersion: apiserver.config.k8s.io/v1\\nkind: AdmissionConfiguration\\nplugins: []\\n' > ${cfg}`]);
    await s1.close();
    const bad = inventoryWith('bad.yaml', (c) => { c.extraArgs = { 'kube-apiserver': { 'admission-control-config-file': cfg } }; });
    const before = await fileHashes('node2');
    const r = hardwire(['upgrade', 'apply', '--to', TO, '--inventory', bad, '--state-dir', state, '--gate-timeout', '45'], { timeoutMs: 900_000 });
    expect(r.code).toBe(1);
    const line = r.stderr.split('\n').find((l) => l.startsWith('error:')) ?? '';
    expect(line).toMatch(/gate "kube-apiserver: .*" failed on node2 at v1\.37\.2/);
    expect(line).toMatch(/node2 was rolled back/);
    expect(r.stderr).toContain('upgrade-admission.yaml'); // the real error, from node2's journal
    // node2: every file as before but etcd's (its hops were done), read on the host.
    const after = await fileHashes('node2');
    const etcdFiles = ['/usr/local/bin/etcd', '/usr/local/bin/etcdctl', '/usr/local/bin/etcdutl', '/etc/systemd/system/etcd.service'];
    const changed = [...new Set([...before.keys(), ...after.keys()])].filter((p) => before.get(p) !== after.get(p));
    expect(changed.filter((p) => !etcdFiles.includes(p))).toEqual([]);
    const n1 = await hostVersions('node1');
    const n2 = await hostVersions('node2');
    const n3 = await hostVersions('node3');
    expect(n1.versions['kube-apiserver']).toBe(TO);
    expect(n1.argv['kube-apiserver']).toContain(`--admission-control-config-file=${cfg}`);
    expect(n2.versions['kube-apiserver']).toBe('v1.36.3');
    expect(n2.argv['kube-apiserver']).not.toContain(`--admission-control-config-file=${cfg}`);
    expect(n3.versions['kube-apiserver']).toBe('v1.36.3');
    const creds = credsFromKubeconfig(join(state, loadValidInventory(inv).cluster.name, 'kubeconfigs', 'admin.conf'));
    for (const h of lab.info.hosts.slice(0, 2)) {
      expect((await kubeRequest(withServer(creds, `https://${h.address}:6443`), 'GET', '/readyz')).status, h.name).toBe(200);
    }
    // The inventory fixed: the re-run reads what runs, finishes node2 and node3, and re-renders node1 without the flag.
    const fixed = hardwire(['upgrade', 'apply', '--to', TO, '--inventory', inv, '--state-dir', state, '--json'], { timeoutMs: 900_000 });
    expect(fixed.code, fixed.stderr.slice(-3000)).toBe(0);
    const doc = JSON.parse(fixed.stdout) as ApplyJson;
    expect(doc.done.filter((d) => d.restart.includes('etcd'))).toEqual([]);
    for (const h of lab.info.hosts) {
      const { versions, argv } = await hostVersions(h.name);
      expect(versions['kube-apiserver'], h.name).toBe(TO);
      expect(argv['kube-apiserver'], h.name).not.toContain(`--admission-control-config-file=${cfg}`);
    }
  }, 900_000);
});
