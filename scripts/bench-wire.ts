// Wire figures on lab hosts (binaries already cached): cold wire by phase, the no-op re-run, the
// floor (the same files and units started on one host by a bare tar-over-ssh + systemctl), and
// how cold wire grows with 1, 3 and 5 hosts. Prints figures; not a test.
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { $ } from 'zx';
import { labDown, labUp } from '../lab/index.ts';
import { loadInventory } from '../inventory/load.ts';
import { ensureAll } from '../components/binaries/index.ts';

const cli = join(import.meta.dirname, '..', 'cli', 'hardwire.ts');
const sizes = (process.argv[2] ?? '1,3,5').split(',').map(Number);

async function wire(inv: string, state: string): Promise<{ total: number; phases: Record<string, number> }> {
  const r = await $({ quiet: true, nothrow: true })`${process.execPath} ${cli} wire --inventory ${inv} --state-dir ${state} --json`;
  if (r.exitCode !== 0) throw new Error(`wire failed: ${r.stderr.slice(-2000)}`);
  const d = JSON.parse(r.stdout) as { durationsMs: Record<string, number> };
  const { total, ...phases } = d.durationsMs;
  return { total: total!, phases };
}

const rows: string[] = [];
for (const n of sizes) {
  // Stable state dir per lab, so a crashed run's lab is taken down by the next run.
  const name = `benchw${n}`;
  const stateDir = join(tmpdir(), 'hardwire-bench-labs', name);
  await labDown({ name, stateDir }).catch(() => undefined);
  rmSync(stateDir, { recursive: true, force: true });
  mkdirSync(stateDir, { recursive: true });
  try {
    const lab = await labUp({ name, stateDir, hosts: n });
    const state = join(stateDir, 'state');
    const cold = await wire(lab.inventory, state);
    const noop = await wire(lab.inventory, state);
    rows.push(`${String(n).padStart(2)} host(s): cold ${(cold.total / 1000).toFixed(1)} s, no-op ${(noop.total / 1000).toFixed(1)} s`);
    if (n === 3 || sizes.length === 1) {
      console.log(`cold wire, ${n} hosts, by phase (ms): ${JSON.stringify(cold.phases)}`);
      console.log(`no-op re-run, ${n} hosts, by phase (ms): ${JSON.stringify(noop.phases)}`);
    }
    if (n === 1) {
      // Floor: teardown, then the same rendered tree and binaries pushed with one tar stream and
      // started with one systemctl call, timed until the apiserver answers /readyz.
      await $({ quiet: true })`${process.execPath} ${cli} teardown --inventory ${lab.inventory} --state-dir ${state} --purge-data`;
      const inv = loadInventory(lab.inventory);
      const h = inv.hosts[0]!;
      const bins = await ensureAll(['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler']);
      const tree = join(state, inv.cluster.name, 'hosts', h.name);
      const ssh = ['-i', h.ssh.identityFile, '-o', `UserKnownHostsFile=${inv.knownHostsFile}`, '-o', 'StrictHostKeyChecking=yes', `root@${h.address}`];
      const t0 = performance.now();
      // The rendered tree in one tar stream; each binary streamed from its cache dir.
      // A failed step throws: a floor with a missing file or unit would be no floor.
      await $({ quiet: true })`tar -C ${tree} -cf - etc`.pipe($({ quiet: true })`ssh ${ssh} tar -C / -xf -`);
      for (const b of bins) await $({ quiet: true, input: readFileSync(b.path) })`ssh ${ssh} sh -c ${`cat > /usr/local/bin/${b.name} && chmod 755 /usr/local/bin/${b.name}`}`;
      await $({ quiet: true })`ssh ${ssh} systemctl daemon-reload`;
      await $({ quiet: true })`ssh ${ssh} systemctl start etcd kube-apiserver kube-controller-manager kube-scheduler`;
      const admin = join(state, inv.cluster.name, 'kubeconfigs', 'admin.conf');
      const kubectl = (await ensureAll(['kubectl']))[0]!.path;
      while ((await $({ quiet: true, nothrow: true })`${kubectl} --kubeconfig ${admin} get --raw /readyz`).stdout.trim() !== 'ok') await new Promise((r) => setTimeout(r, 250));
      console.log(`floor, 1 host (tar over ssh + systemctl start, until /readyz): ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }
  } finally {
    await labDown({ name, stateDir });
  }
}
for (const r of rows) console.log(r);
