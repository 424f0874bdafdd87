// `pnpm bench pki-vs-kubeadm [runs]`: the real kubeadm (pinned version) running
// `init phase certs all` + `init phase kubeconfig all` for each of the 3 control-plane nodes of
// hosts/example.yaml, against `hardwire pki` for the same 3-node cluster. Same machine, same run,
// interleaved, median of N. Both sides are timed as CLI processes, local temp dirs, no lab.
// kubeadm does HA the way its docs say: node 1 creates the CAs and sa key, nodes 2 and 3 get copies
// of them (what `kubeadm join --control-plane` expects) and create their own leaves.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { $ } from 'zx';
import { loadValidInventory } from '../core/validate/inventory.ts';
import { ensureBinary } from '../core/components/binaries/index.ts';
import { clusterParams } from '../harness/compare/index.ts';
import { kubeadmConfig } from '../harness/planes/kubeadm.ts';

const runs = Number(process.argv[2] ?? 5);
const root = join(import.meta.dirname, '..');
const invFile = join(root, 'hosts', 'example.yaml');
const inv = loadValidInventory(invFile);
const kubeadm = (
  await ensureBinary('kubeadm', { kubernetesVersion: inv.cluster.kubernetesVersion })
).path;
const SHARED = [
  'ca.crt',
  'ca.key',
  'front-proxy-ca.crt',
  'front-proxy-ca.key',
  'etcd/ca.crt',
  'etcd/ca.key',
  'sa.key',
  'sa.pub',
];

/** Milliseconds one command takes, including the few ms zx's bash adds (6 commands a round for kubeadm, 1 for hardwire); throws if it fails. */
async function run(cmd: string, args: string[]): Promise<number> {
  const t0 = performance.now();
  const r = await $({ quiet: true, nothrow: true })`${cmd} ${args}`;
  const ms = performance.now() - t0;
  if (r.exitCode !== 0)
    throw new Error(
      `${cmd} ${args.join(' ')} exited ${r.exitCode}: ${(r.stderr || r.stdout).slice(-800)}`,
    );
  return ms;
}

async function kubeadmOnce(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'hardwire-bench-kubeadm-'));
  let total = 0;
  try {
    for (const [i, h] of inv.controlPlaneHosts.entries()) {
      const node = join(dir, h.name);
      const pki = join(node, 'pki');
      mkdirSync(pki, { recursive: true });
      const cfg = kubeadmConfig(clusterParams(inv, h)).replace(
        /kind: ClusterConfiguration\n/,
        `kind: ClusterConfiguration\ncertificatesDir: ${pki}\n`,
      );
      writeFileSync(join(node, 'kubeadm.yaml'), cfg);
      if (i > 0)
        for (const f of SHARED)
          cpSync(join(dir, inv.controlPlaneHosts[0]!.name, 'pki', f), join(pki, f));
      total += await run(kubeadm, [
        'init',
        'phase',
        'certs',
        'all',
        '--config',
        join(node, 'kubeadm.yaml'),
      ]);
      total += await run(kubeadm, [
        'init',
        'phase',
        'kubeconfig',
        'all',
        '--config',
        join(node, 'kubeadm.yaml'),
        '--kubeconfig-dir',
        node,
      ]);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return total;
}

async function hardwireOnce(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'hardwire-bench-pki-'));
  try {
    return await run(process.execPath, [
      join(root, 'cli', 'hardwire.ts'),
      'pki',
      '--inventory',
      invFile,
      '--state-dir',
      dir,
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const k: number[] = [];
const h: number[] = [];
for (let i = 0; i < runs; i++) {
  k.push(await kubeadmOnce());
  h.push(await hardwireOnce());
}
const km = median(k);
const hm = median(h);
console.log(
  `PKI + kubeconfigs for a 3-control-plane cluster (${invFile.replace(`${root}/`, '')}), median of ${runs}, same machine, interleaved:`,
);
console.log(
  `  kubeadm ${inv.cluster.kubernetesVersion}: certs all + kubeconfig all on each of 3 nodes   ${km.toFixed(0).padStart(6)} ms   (runs: ${k.map((x) => x.toFixed(0)).join(', ')})`,
);
console.log(
  `  hardwire pki (one process, all 3 nodes)                        ${hm.toFixed(0).padStart(6)} ms   (runs: ${h.map((x) => x.toFixed(0)).join(', ')})`,
);
console.log(
  `  ratio hardwire / kubeadm: ${(hm / km).toFixed(2)} (${hm <= km ? 'hardwire is no slower' : 'hardwire is SLOWER'})`,
);
