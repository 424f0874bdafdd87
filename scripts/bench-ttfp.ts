// pnpm bench ttfp [--from FILE] [--no-cis]: time to first Pod per plane, from one compare run. Without
// --from it runs `hardwire compare` without an inventory, which brings up its own fresh 2-host lab for
// hardwire (node1 etcd + control plane, node2 worker) and wires it inside the run; with --from it reads
// that run's JSON (compare --json). Prints each plane's phases
// (certs, control plane ready, node Ready, Pod Running: each its own length) and the ratios to hardwire's.
// Figures, not a test: the machine is shared.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { $ } from 'zx';
import type { CompareReport } from '../harness/compare/types.ts';
import { PHASE_LABEL } from '../harness/compare/ttfp-section.ts';
import { TTFP_PHASES } from '../harness/planes/ttfp-watch.ts';

const PLANES = ['hardwire', 'kubeadm', 'k0s'] as const;

function print(r: CompareReport, from: string): void {
  const s = (ms?: number) => (ms === undefined ? '—' : `${(ms / 1000).toFixed(1)} s`);
  const ratio = (ms?: number, base?: number) =>
    ms === undefined || !base ? '' : ` (${(ms / base).toFixed(2)}×)`;
  const hw = r.ttfp.hardwire;
  const cell = (p: (typeof PLANES)[number], ms?: number, base?: number) =>
    `${`${s(ms)}${p === 'hardwire' ? '' : ratio(ms, base)}`.padEnd(21)} `;
  console.log(
    `time to first Pod (${from}), Kubernetes ${r.kubernetesVersion}; ratios to hardwire's`,
  );
  console.log(`${'phase'.padEnd(36)}${PLANES.map((p) => p.padEnd(22)).join('')}`);
  for (const ph of TTFP_PHASES) {
    const ms = (p: (typeof PLANES)[number]) => r.ttfp[p].phases?.find((x) => x.phase === ph)?.ms;
    console.log(
      `${PHASE_LABEL[ph].padEnd(36)}${PLANES.map((p) => cell(p, ms(p), ms('hardwire'))).join('')}`,
    );
  }
  console.log(
    `${'total'.padEnd(36)}${PLANES.map((p) => cell(p, r.ttfp[p].totalMs, hw.totalMs)).join('')}`,
  );
  for (const p of PLANES) {
    const x = r.ttfp[p];
    console.log(
      `  ${p}: ${x.whole ? `whole, Pod ${x.pod} on worker ${x.worker}` : `NOT whole: ${x.missing}`}${x.unmeasured ? `; not measured: ${x.unmeasured}` : ''}`,
    );
  }
}

const args = process.argv.slice(2);
const from = args.indexOf('--from');
if (from >= 0) {
  const file = args[from + 1];
  if (!file) {
    process.stderr.write('--from: give the compare JSON file (hardwire compare --json > FILE)\n');
    process.exit(2);
  }
  print(JSON.parse(readFileSync(file, 'utf8')) as CompareReport, file);
} else {
  const cli = join(import.meta.dirname, '..', 'cli', 'hardwire.ts');
  const state = mkdtempSync(join(tmpdir(), 'hardwire-bench-ttfp-'));
  const env = { ...process.env, HARDWIRE_STATE: state };
  const lab = 'bench-ttfp';
  const sh = $({ env, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const out = join(state, 'r.json');
    // No --inventory: compare's own hardwire lab, as `pnpm compare` has it (node1 control plane, node2 worker), fresh and wired in the run.
    // --json: the report on stdout, kept in out.
    writeFileSync(
      out,
      (
        await sh`${process.execPath} ${cli} compare --hardwire-lab ${lab} --kubeadm-lab ${`${lab}-kubeadm`} --k0s-lab ${`${lab}-k0s`} --json --quiet ${args.includes('--no-cis') ? ['--no-cis'] : []}`
      ).stdout,
    );
    print(
      JSON.parse(readFileSync(out, 'utf8')) as CompareReport,
      'one compare run; hardwire on a fresh 2-host lab, node1 control plane, node2 worker',
    );
  } finally {
    for (const n of [lab, `${lab}-kubeadm`, `${lab}-k0s`, `${lab}-k0s-w`])
      await $({
        env,
        nothrow: true,
        quiet: true,
      })`${process.execPath} ${cli} lab down --name ${n} --quiet`;
    rmSync(state, { recursive: true, force: true });
  }
}
