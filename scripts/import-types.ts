// Part of `pnpm loops`: no inline `import('./x.ts').T` type in the project's sources. dependency-cruiser
// (through swc) sees such a type only where it is a whole annotation, not inside a generic or a union,
// so a loop through one went unseen (compare/types.ts ↔ ttfp-section.ts). Written as `import type` at
// the top, every type dependency is in the graph the loop and folder rules check.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseSync } from '@swc/core';

interface Node {
  type?: string;
  span?: { start: number };
  argument?: { value?: string };
}

function walk(n: unknown, f: (n: Node) => void): void {
  if (Array.isArray(n)) for (const x of n) walk(x, f);
  else if (n && typeof n === 'object') {
    if ('type' in n) f(n as Node);
    for (const v of Object.values(n)) walk(v, f);
  }
}

const files = execFileSync(
  'git',
  ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts'],
  { encoding: 'utf8' },
)
  .split('\n')
  .filter(Boolean);
const found: string[] = [];
for (const file of files) {
  let src: string;
  try {
    src = readFileSync(file, 'utf8');
  } catch {
    continue;
  } // deleted in the work tree
  if (!src.includes('import(')) continue;
  // swc's offsets run on across parses: a first statement of our own marks where this file starts.
  const text = `0;\n${src.replace(/^#!/, '//')}`; // a shebang is legal only on the first line
  const mod = parseSync(text, { syntax: 'typescript' });
  const base = (mod.body[0] as Node).span!.start;
  const bytes = Buffer.from(text);
  walk(mod, (n) => {
    const spec = n.type === 'TsImportType' ? n.argument?.value : undefined;
    if (!spec?.startsWith('.')) return;
    const line =
      bytes
        .subarray(0, n.span!.start - base)
        .toString()
        .split('\n').length - 1;
    found.push(
      `${file}:${line}: import('${spec}') as a type hides a dependency from the loop check; write \`import type { … } from '${spec}'\` at the top`,
    );
  });
}
for (const f of found) console.error(f);
if (found.length) {
  console.error(`loops: ${found.length} inline import('…') type(s); see above`);
  process.exit(1);
}
