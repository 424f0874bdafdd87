// How many source files outside the registry, the models and the tests name a component by a
// string literal ('kube-controller-manager'), and how many times (issue 40: a component is described
// once). `node scripts/component-literals.ts [COMMIT]` counts the tree at COMMIT (default: the work tree).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const NAMES = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'containerd',
  'kubelet',
  'kube-proxy',
];
const OWN = /^(core\/components\/(registry|models)\/|test\/)/;
const commit = process.argv[2];
const git = (args: string[]) => execFileSync('git', args, { encoding: 'utf8', maxBuffer: 1 << 28 });
const files = (commit ? git(['ls-tree', '-r', '--name-only', commit]) : git(['ls-files']))
  .split('\n')
  .filter((f) => f.endsWith('.ts') && !OWN.test(f));
const text = (f: string) => (commit ? git(['show', `${commit}:${f}`]) : readFileSync(f, 'utf8'));

const rows = NAMES.map((name) => {
  const re = new RegExp(`['"\`]${name.replace(/-/g, '\\-')}['"\`]`, 'g');
  let uses = 0;
  const where = new Set<string>();
  for (const f of files) {
    const n = text(f).match(re)?.length ?? 0;
    if (n) (uses += n), where.add(f);
  }
  return { name, files: where.size, uses };
});
const all = new Set<string>();
for (const f of files)
  if (NAMES.some((n) => new RegExp(`['"\`]${n}['"\`]`).test(text(f)))) all.add(f);
for (const r of rows)
  console.log(
    `${r.name.padEnd(24)} ${String(r.files).padStart(3)} files ${String(r.uses).padStart(4)} uses`,
  );
console.log(
  `${'any component'.padEnd(24)} ${String(all.size).padStart(3)} files ${String(rows.reduce((n, r) => n + r.uses, 0)).padStart(4)} uses (of ${files.length} files outside the registry, the models and the tests)`,
);
