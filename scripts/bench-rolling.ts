// Availability during a rolling change: while wire rolls a flag change to etcd and kube-apiserver
// across a 3-host lab, a client writes and reads ConfigMaps against every ready apiserver at a steady
// rate. Prints requests sent/failed/retried, the longest window with no ready apiserver, whether etcd
// quorum was ever lost, and whether every acknowledged write reads back. Figures, not a test.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { $ } from 'zx';
import { labDown, labUp, labConnect } from '../harness/lab/index.ts';
import { loadValidInventory } from '../core/validate/inventory.ts';
import { credsFromKubeconfig, kubeRequest, withServer } from '../core/transport/kube-api.ts';
import { etcdctlArgv } from '../core/gates/etcd.ts';

const cli = join(import.meta.dirname, '..', 'cli', 'hardwire.ts');
const rateHz = Number(process.argv[2] ?? 10);
const name = 'benchroll';
const stateDir = join(tmpdir(), 'hardwire-bench-labs', name);
const state = join(stateDir, 'state');

async function wire(inv: string): Promise<void> {
  const r = await $({ quiet: true, nothrow: true })`${process.execPath} ${cli} wire --inventory ${inv} --state-dir ${state}`;
  if (r.exitCode !== 0) throw new Error(r.stderr.slice(-2000));
}

await labDown({ name, stateDir }).catch(() => undefined);
rmSync(stateDir, { recursive: true, force: true });
mkdirSync(stateDir, { recursive: true });
try {
  const lab = await labUp({ name, stateDir, hosts: 3 });
  await wire(lab.inventory);
  const inv = loadValidInventory(lab.inventory);
  const creds = credsFromKubeconfig(join(state, inv.cluster.name, 'kubeconfigs', 'admin.conf'));
  const servers = inv.controlPlaneHosts.map((h) => withServer(creds, `https://${h.address}:6443`));
  const doc = parse(readFileSync(lab.inventory, 'utf8')) as { cluster: Record<string, unknown> };
  doc.cluster.extraArgs = { 'kube-apiserver': { v: '1' }, etcd: { 'log-level': 'info' } };
  const changed = join(stateDir, 'changed.yaml');
  writeFileSync(changed, stringify(doc));
  await kubeRequest(creds, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'rolling' } } });

  // Readiness of each apiserver, sampled every 200 ms.
  const ready = servers.map(() => false);
  let noneSince: number | undefined;
  let longestNoneMs = 0;
  // etcd quorum, sampled every second over SSH.
  const etcdSession = await labConnect('node1', { name, stateDir });
  let quorumLost = 0;
  let stop = false;
  const readyLoop = (async () => {
    while (!stop) {
      await Promise.all(servers.map(async (s, i) => {
        ready[i] = await kubeRequest(s, 'GET', '/readyz', { timeoutMs: 1000 }).then((r) => r.status === 200, () => false);
      }));
      const now = Date.now();
      if (ready.some(Boolean)) { if (noneSince !== undefined) longestNoneMs = Math.max(longestNoneMs, now - noneSince); noneSince = undefined; }
      else noneSince ??= now;
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  const quorumLoop = (async () => {
    while (!stop) {
      const r = await etcdSession.exec(etcdctlArgv(inv, 'endpoint', 'health', '-w', 'json'), { allowFail: true, timeoutMs: 10_000 });
      const healthy = (JSON.parse(r.stdout || '[]') as { health: boolean }[]).filter((e) => e.health).length;
      if (healthy < 2) quorumLost++;
      await new Promise((res) => setTimeout(res, 1000));
    }
  })();

  // The client: one write + read per tick, on a ready apiserver, retrying on another on failure.
  let sent = 0; let failed = 0; let retried = 0; let seq = 0;
  const acked: string[] = [];
  const clientLoop = (async () => {
    while (!stop) {
      const id = `cm-${seq++}`;
      const order = servers.map((_, i) => i).sort((a, b) => Number(ready[b]) - Number(ready[a]) || (a + seq) % 3 - (b + seq) % 3);
      let ok = false;
      for (const [attempt, i] of order.entries()) {
        sent++;
        if (attempt > 0) retried++;
        const w = await kubeRequest(servers[i]!, 'POST', '/api/v1/namespaces/rolling/configmaps', { timeoutMs: 3000, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: id }, data: { seq: id } } }).catch(() => undefined);
        if (w?.status === 201 || w?.status === 409) {
          const r = await kubeRequest(servers[i]!, 'GET', `/api/v1/namespaces/rolling/configmaps/${id}`, { timeoutMs: 3000 }).catch(() => undefined);
          sent++;
          if (r?.status === 200) { ok = true; acked.push(id); break; }
        }
        failed++;
      }
      void ok;
      await new Promise((r) => setTimeout(r, 1000 / rateHz));
    }
  })();

  const t0 = performance.now();
  const roll = await $({ quiet: true, nothrow: true })`${process.execPath} ${cli} wire --inventory ${changed} --state-dir ${state} --json`;
  const code = roll.exitCode;
  const out = roll.stdout;
  const rollMs = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 2000));
  stop = true;
  await Promise.all([readyLoop, quorumLoop, clientLoop]);
  if (noneSince !== undefined) longestNoneMs = Math.max(longestNoneMs, Date.now() - noneSince);
  await etcdSession.close();

  const list = await kubeRequest(creds, 'GET', '/api/v1/namespaces/rolling/configmaps');
  const present = new Set((JSON.parse(list.body) as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name));
  const lost = acked.filter((id) => !present.has(id));
  const restarted = code === 0 ? (JSON.parse(out) as { restarted: { host: string; unit: string }[] }).restarted : [];
  console.log(`rolling change (etcd --log-level, kube-apiserver --v) across 3 hosts, client at ${rateHz} writes/s:`);
  console.log(`  wire exit ${code} in ${(rollMs / 1000).toFixed(1)} s; restarted ${restarted.map((r) => `${r.host}/${r.unit}`).join(', ')}`);
  console.log(`  requests sent ${sent}, failed ${failed}, retried ${retried}`);
  console.log(`  longest window with no ready apiserver: ${longestNoneMs} ms`);
  console.log(`  etcd samples without quorum: ${quorumLost}`);
  console.log(`  acknowledged writes ${acked.length}, lost ${lost.length}`);
} finally {
  await labDown({ name, stateDir });
}
