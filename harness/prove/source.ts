// Reading a cited file:line back from the Go module cache: the enclosing function (to check what
// delve reported) and the innermost enclosing condition (to name why a site was not reached).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { goModCache } from '../../core/components/binaries/go-env.ts';

/** The module cache escapes upper case as "!" + lower case (golang.org/x/mod/module.EscapePath). */
const escape = (p: string) => p.replace(/[A-Z]/g, (c) => `!${c.toLowerCase()}`);

export function modulePath(module: string, version: string, file: string): string {
  return join(goModCache(), `${escape(module)}@${escape(version)}`, file);
}

export function sourceLines(module: string, version: string, file: string): string[] | undefined {
  const p = modulePath(module, version, file);
  return existsSync(p) ? readFileSync(p, 'utf8').split('\n') : undefined;
}

/**
 * The top-level function declaration around a 1-based line, as delve names it without the package:
 * `(*Options).ApplyDeprecated`, `createKubeConfig`. Undefined outside any function.
 */
export function enclosingFunc(lines: string[], line: number): string | undefined {
  for (let i = line - 1; i >= 0; i--) {
    const l = lines[i]!;
    if (i < line - 1 && /^}/.test(l)) return undefined; // the previous declaration ended first
    const m = /^func\s+(?:\(\s*(?:\w+\s+)?(\*?)\s*(\w+)(?:\[[^\]]*\])?\s*\)\s*)?(\w+)/.exec(l);
    // As the flag map and delve name them: (*T).M for a pointer receiver, T.M for a value receiver
    // (named or not: `func (strategy) Validate`).
    if (m) return m[2] ? (m[1] ? `(*${m[2]}).${m[3]}` : `${m[2]}.${m[3]}`) : m[3];
    const v = /^var\s+(\w+)\s*=\s*func\b/.exec(l);
    if (v) return `var ${v[1]}`; // a package-level function literal, as the flag map names it
  }
  return undefined;
}

/** Delve's function name reduced to the form above: package path and closure suffixes (`.func1`, nested `.func1.2`, the wrappers of `defer f()` and `go f()`) dropped. */
export function shortFunc(delveName: string): string {
  const afterPkg = delveName.slice(delveName.lastIndexOf('/') + 1);
  const noPkg = afterPkg.slice(afterPkg.indexOf('.') + 1);
  return noPkg.replace(/(\.(?:func|deferwrap|gowrap)?\d+)+$/, '').replace(/\[[^\]]*\]/g, '');
}

/**
 * Whether delve's function is the one named from the source: a package-level `var x = func…`
 * compiles into the package's init closures, which delve names `init.funcN` (init.func1 for
 * factory's `var newETCD3Client`), so any `var` literal matches `init`.
 */
export function sameFunction(sourceName: string | undefined, delveName: string): boolean {
  const short = shortFunc(delveName);
  return sourceName !== undefined && (sourceName.replace(/\[[^\]]*\]/g, '') === short || (sourceName.startsWith('var ') && short === 'init'));
}

/**
 * The innermost `if`, `case`, `for` or `switch` whose block holds the line, by brace depth
 * (gofmt'd code: one opening brace per block line); undefined when the line is in the function's
 * own body, reached whenever the function runs.
 */
export function enclosingCondition(lines: string[], line: number): { line: number; text: string } | undefined {
  let depth = 0;
  for (let i = line - 2; i >= 0; i--) {
    const l = lines[i]!;
    const code = l.replace(/\/\/.*$/, '').replace(/"(?:[^"\\]|\\.)*"|`[^`]*`/g, '""');
    const opens = (code.match(/{/g) ?? []).length;
    const closes = (code.match(/}/g) ?? []).length;
    if (/^\s*(case\b.*|default):\s*$/.test(code) && depth === 0) return { line: i + 1, text: l.trim() };
    depth += closes - opens;
    if (depth < 0) {
      if (/^func\b/.test(l)) return undefined;
      if (/^\s*(}\s*else\s+)?(if|for|switch|select)\b|^\s*}\s*else\s*{/.test(l)) return { line: i + 1, text: l.trim() };
      depth = 0; // a composite literal or closure: keep looking outwards
    }
  }
  return undefined;
}

/**
 * The `if` blocks before a line, in the same block as the line, that end in a return: when a
 * function ran but a site after them was not hit, one of these returned first. Error checks
 * (`if err != nil`) are left out: a healthy start does not take them. In file order.
 */
export function earlyReturns(lines: string[], line: number): { line: number; text: string }[] {
  let start = line - 2;
  while (start >= 0 && !/^func\b/.test(lines[start]!)) start--;
  if (start < 0) return [];
  type Block = { line: number; text: string; isIf: boolean; returns: boolean; parent: number };
  const stack: Block[] = [];
  const closed: Block[] = [];
  for (let i = start + 1; i < line - 1; i++) {
    const l = lines[i]!;
    const code = l.replace(/\/\/.*$/, '').replace(/"(?:[^"\\]|\\.)*"|`[^`]*`|'(?:[^'\\]|\\.)*'/g, '""');
    const closes = (code.match(/}/g) ?? []).length;
    const opens = (code.match(/{/g) ?? []).length;
    if (/^\s*return\b/.test(code) && stack.length) stack.at(-1)!.returns = true;
    for (let k = 0; k < closes; k++) {
      const b = stack.pop();
      // `} else` continues the chain: the if alone does not end the function.
      if (b && b.isIf && b.returns && !/^\s*}\s*else\b/.test(code)) closed.push(b);
    }
    for (let k = 0; k < opens; k++) {
      stack.push({ line: i + 1, text: l.trim(), isIf: k === opens - 1 && /^\s*if\b/.test(code), returns: false, parent: stack.at(-1)?.line ?? 0 });
    }
  }
  const parent = stack.at(-1)?.line ?? 0;
  return closed.filter((b) => b.parent === parent && !/^if\s+(.*;\s*)?err\s*!=\s*nil\s*{$/.test(b.text)).map((b) => ({ line: b.line, text: b.text }));
}
