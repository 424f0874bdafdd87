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
import { credsFromKubeconfig } from '../core/transport/kube-api.ts';
import { startLoad } from '../harness/rolling-load.ts';
import { etcdctlArgv } from '../core/gates/etcd.ts';

const cli = join(import.meta.dirname, '..', 'cli', 'hardwire.ts');
const rateHz = Number(process.argv[2] ?? 10);
const name = 'benchroll';
const stateDir = join(tmpdir(), 'hardwire-bench-labs', name);
const state = join(stateDir, 'state');

async function wire(inv: string): Promise<void> {
  const r = await $({
    quiet: true,
    nothrow: true,
  })`${process.execPath} ${cli} wire --inventory ${inv} --state-dir ${state}`;
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
  const doc = parse(readFileSync(lab.inventory, 'utf8')) as { cluster: Record<string, unknown> };
  doc.cluster.extraArgs = { 'kube-apiserver': { v: '1' }, etcd: { 'log-level': 'info' } };
  const changed = join(stateDir, 'changed.yaml');
  writeFileSync(changed, stringify(doc));
  // The client and the /readyz sampler (harness/rolling-load.ts), as the upgrade test runs them.
  const load = await startLoad(
    creds,
    inv.controlPlaneHosts.map((h) => h.address),
    'rolling',
    rateHz,
  );
  // etcd quorum, sampled every second over SSH.
  const etcdSession = await labConnect('node1', { name, stateDir });
  let quorumLost = 0;
  let stop = false;
  const quorumLoop = (async () => {
    while (!stop) {
      const r = await etcdSession.exec(etcdctlArgv(inv, 'endpoint', 'health', '-w', 'json'), {
        allowFail: true,
        timeoutMs: 10_000,
      });
      const healthy = (JSON.parse(r.stdout || '[]') as { health: boolean }[]).filter(
        (e) => e.health,
      ).length;
      if (healthy < 2) quorumLost++;
      await new Promise((res) => setTimeout(res, 1000));
    }
  })();

  const t0 = performance.now();
  const roll = await $({
    quiet: true,
    nothrow: true,
  })`${process.execPath} ${cli} wire --inventory ${changed} --state-dir ${state} --json`;
  const code = roll.exitCode;
  const out = roll.stdout;
  const rollMs = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 2000));
  stop = true;
  const rep = await load.stop();
  await quorumLoop;
  await etcdSession.close();
  const restarted =
    code === 0
      ? (JSON.parse(out) as { restarted: { host: string; unit: string }[] }).restarted
      : [];
  console.log(
    `rolling change (etcd --log-level, kube-apiserver --v) across 3 hosts, client at ${rateHz} writes/s:`,
  );
  console.log(
    `  wire exit ${code} in ${(rollMs / 1000).toFixed(1)} s; restarted ${restarted.map((r) => `${r.host}/${r.unit}`).join(', ')}`,
  );
  console.log(
    `  writes sent ${rep.sent}, failed ${rep.failed}, retried ${rep.retried} (each acknowledged write is also read back)`,
  );
  console.log(`  longest window with no ready apiserver: ${rep.longestNoneMs} ms`);
  console.log(`  etcd samples without quorum: ${quorumLost}`);
  console.log(`  acknowledged writes ${rep.acked}, lost ${rep.lost.length}`);
} finally {
  await labDown({ name, stateDir });
}
