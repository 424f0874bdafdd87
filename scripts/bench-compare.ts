// pnpm bench compare: how long `hardwire compare` takes, plane by plane, on a fresh 1-host lab
// (wired first, not timed). Prints the wall time of the whole command, each plane's collection
// (kube-bench included), and k0s's single and HA controllers from `systemctl start` to /readyz.
// Figures, not a test: the machine is shared.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { $ } from 'zx';
import type { CompareReport } from '../harness/compare/types.ts';

const cli = join(import.meta.dirname, '..', 'cli', 'hardwire.ts');
const noCis = process.argv.includes('--no-cis');
const state = mkdtempSync(join(tmpdir(), 'hardwire-bench-compare-'));
const env = { ...process.env, HARDWIRE_STATE: state };
const lab = 'bench-compare';
const sh = $({ env, stdio: ['ignore', 'pipe', 'inherit'] });
try {
  const inv = (await sh`${process.execPath} ${cli} lab up --name ${lab} --hosts 1 --quiet`).stdout
    .trim()
    .split('\n')
    .pop()!;
  await sh`${process.execPath} ${cli} wire --inventory ${inv} --json`;
  const out = join(state, 'r.json');
  const t0 = performance.now();
  // --json: the report on stdout, kept in out.
  writeFileSync(
    out,
    (
      await sh`${process.execPath} ${cli} compare --inventory ${inv} --kubeadm-lab ${`${lab}-kubeadm`} --k0s-lab ${`${lab}-k0s`} --json --quiet ${noCis ? ['--no-cis'] : []}`
    ).stdout,
  );
  const wall = (performance.now() - t0) / 1000;
  const r = JSON.parse(readFileSync(out, 'utf8')) as CompareReport;
  const s = (ms?: number) => (ms === undefined ? '—' : `${(ms / 1000).toFixed(1)} s`);
  console.log(
    `hardwire compare${noCis ? ' --no-cis' : ''}, 1-host hardwire lab: ${wall.toFixed(1)} s wall`,
  );
  for (const p of ['hardwire', 'kubeadm', 'k0s'] as const)
    console.log(
      `  ${p.padEnd(9)} ${s(r.planes[p].collectMs)}${r.cis?.[p] ? ` (kube-bench ${r.cis[p]!.hosts.map((h) => `${h.seconds} s`).join(', ')})` : ''}`,
    );
  for (const c of r.k0s?.controllers ?? [])
    console.log(`  k0s ${c.host} (${c.topology}): systemctl start to /readyz ${s(c.readyMs)}`);
  const lab4 = r.planes.k0s.steps.find((x) => x.step.startsWith('fresh lab'));
  const stage = r.planes.k0s.steps.find((x) => x.step.startsWith('stage k0s'));
  console.log(`  k0s lab up (4 hosts) ${s(lab4?.ms)}, binaries staged on 4 hosts ${s(stage?.ms)}`);
} finally {
  for (const n of [lab, `${lab}-kubeadm`, `${lab}-k0s`])
    await $({
      env,
      nothrow: true,
      quiet: true,
    })`${process.execPath} ${cli} lab down --name ${n} --quiet`;
  rmSync(state, { recursive: true, force: true });
}
