// No data lost by our own hand: snapshot before etcd changes, restore after destroying the data,
// and rollback of a wire run from its on-host backups. On a real wired lab.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { hardwire } from './helpers/cli.ts';
import { testLab, remote, type TestLab } from './helpers/lab.ts';
import { credsFromKubeconfig, kubeJson, kubeRequest, type KubeCreds } from '../kube/client.ts';
import { loadInventory } from '../inventory/load.ts';

let lab: TestLab;
let inv: string;
let state: string;
let creds: KubeCreds;

function run(args: string[]): { code: number; stdout: string; stderr: string } {
  return hardwire([...args, '--inventory', inv, '--state-dir', state], { timeoutMs: 600_000 });
}

function withArgs(file: string, extra: Record<string, Record<string, string>>): string {
  const d = parse(readFileSync(inv, 'utf8')) as { cluster: Record<string, unknown> };
  d.cluster.extraArgs = extra;
  const out = join(lab.stateDir, file);
  writeFileSync(out, stringify(d));
  return out;
}

const cm = (name: string) => kubeRequest(creds, 'GET', `/api/v1/namespaces/default/configmaps/${name}`).then((r) => r.status);

beforeAll(async () => {
  lab = await testLab('snaptest', 3);
  inv = lab.info.inventory;
  state = join(lab.stateDir, 'state');
  const w = run(['wire']);
  expect(w.code, w.stderr.slice(-2000)).toBe(0);
  creds = credsFromKubeconfig(join(state, loadInventory(inv).cluster.name, 'kubeconfigs', 'admin.conf'));
});

afterAll(async () => {
  await lab?.down();
});

describe('etcd snapshots, restore and rollback', () => {
  it('wire snapshots etcd (verified) before it restarts etcd', () => {
    const changed = withArgs('inv-etcd.yaml', { etcd: { 'log-level': 'info' } });
    const r = hardwire(['wire', '--inventory', changed, '--state-dir', state, '--json'], { timeoutMs: 600_000 });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const doc = JSON.parse(r.stdout) as { snapshot: { file: string; revision: number; totalKey: number; from: string } | null; restarted: { unit: string }[] };
    expect(doc.restarted.filter((x) => x.unit === 'etcd.service')).toHaveLength(3);
    expect(doc.snapshot).not.toBeNull();
    expect(existsSync(doc.snapshot!.file)).toBe(true);
    expect(doc.snapshot!.revision).toBeGreaterThan(0);
    expect(doc.snapshot!.totalKey).toBeGreaterThan(10);
  });

  it('save, destroy the data, restore: data from before the snapshot is back, data after it is gone', async () => {
    await kubeJson(creds, 'POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'before-snapshot' }, data: { v: '1' } } });
    const save = run(['etcd', 'snapshot', 'save', '--json']);
    expect(save.code, save.stderr).toBe(0);
    const file = (JSON.parse(save.stdout) as { file: string }).file;
    await kubeJson(creds, 'POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-snapshot' } } });
    // Destroy: stop everything and delete every member's data.
    for (const h of lab.info.hosts) {
      const s = await lab.ssh(h.name);
      await s.exec(['systemctl', 'stop', 'kube-scheduler', 'kube-controller-manager', 'kube-apiserver', 'etcd'], { timeoutMs: 180_000 });
      await s.exec(['rm', '-rf', '/var/lib/etcd']);
      await s.close();
    }
    const restore = run(['etcd', 'snapshot', 'restore', file, '--json']);
    expect(restore.code, restore.stderr.slice(-2000)).toBe(0);
    expect(await cm('before-snapshot')).toBe(200);
    expect(await cm('after-snapshot')).toBe(404);
    const v = run(['verify']);
    expect(v.code, v.stderr.slice(-2000)).toBe(0);
  }, 600_000);

  it('rollback <run-id> restores the files a run overwrote and restarts what reads them', async () => {
    const v2 = withArgs('inv-v2.yaml', { etcd: { 'log-level': 'info' }, 'kube-scheduler': { v: '2' } });
    const a = hardwire(['wire', '--inventory', v2, '--state-dir', state, '--json'], { timeoutMs: 600_000 });
    expect(a.code, a.stderr.slice(-2000)).toBe(0);
    const runId = (JSON.parse(a.stdout) as { runId: string; backups: { runId: string } | null }).backups!.runId;
    const s = await lab.ssh('node2');
    expect(await remote(s, ['grep', '-c', '^  --v=2', '/etc/systemd/system/kube-scheduler.service'])).toBe('1');
    const rb = hardwire(['rollback', runId, '--inventory', v2, '--state-dir', state, '--json'], { timeoutMs: 600_000 });
    expect(rb.code, rb.stderr.slice(-2000)).toBe(0);
    const doc = JSON.parse(rb.stdout) as { restarted: { host: string; unit: string }[] };
    expect(doc.restarted.map((r) => `${r.host}/${r.unit}`)).toEqual(['node1/kube-scheduler.service', 'node2/kube-scheduler.service', 'node3/kube-scheduler.service']);
    expect(await remote(s, ['grep', '-c', '^  --v=2', '/etc/systemd/system/kube-scheduler.service'])).toBe('0');
    await s.close();
    // The operator state still says v=2: the next wire applies it again, and nothing else.
    const again = hardwire(['wire', '--inventory', v2, '--state-dir', state, '--json'], { timeoutMs: 600_000 });
    expect((JSON.parse(again.stdout) as { restarted: { unit: string }[] }).restarted.map((r) => r.unit)).toEqual(['kube-scheduler.service', 'kube-scheduler.service', 'kube-scheduler.service']);
  }, 600_000);
});
