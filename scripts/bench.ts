// `pnpm bench <name>`: benchmark scripts that print figures. Not timed tests.
import { join } from 'node:path';
import { $ } from 'zx';

const benches: Record<string, string> = {
  pki: 'bench-pki.ts',
  components: 'bench-components.ts',
  lab: 'bench-lab.ts',
  wire: 'bench-wire.ts',
  'pki-vs-kubeadm': 'bench-pki-vs-kubeadm.ts',
  rolling: 'bench-rolling.ts',
  compare: 'bench-compare.ts',
  ttfp: 'bench-ttfp.ts',
  suite: 'bench-suite.ts',
  vm: 'bench-vm.ts',
  'vm-worker': 'bench-vm-worker.ts',
};

const [name, ...rest] = process.argv.slice(2);
if (!name || !(name in benches)) {
  process.stderr.write(`usage: pnpm bench <${Object.keys(benches).join('|')}> [options]\n`);
  process.exit(name === '--help' || name === '-h' ? 0 : 2);
}
const r = await $({
  stdio: 'inherit',
  nothrow: true,
})`${process.execPath} ${join(import.meta.dirname, benches[name]!)} ${rest}`;
process.exit(r.exitCode ?? 1);
