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
  return (
    sourceName !== undefined &&
    (sourceName.replace(/\[[^\]]*\]/g, '') === short ||
      (sourceName.startsWith('var ') && short === 'init'))
  );
}

/**
 * The innermost `if`, `case`, `for` or `switch` whose block holds the line, by brace depth
 * (gofmt'd code: one opening brace per block line), a condition over several lines named by its
 * first and last; undefined when the line is in the function's own body, reached whenever the
 * function runs.
 */
export function enclosingCondition(
  lines: string[],
  line: number,
): { line: number; text: string; last?: { line: number; text: string } } | undefined {
  return outwards(lines, line, (i, l) => {
    if (/^\s*(}\s*else\s+)?(if|for|switch|select)\b|^\s*}\s*else\s*{/.test(l))
      return { line: i + 1, text: l.trim() };
    // The last line of a condition written over several lines (`if a &&` … `b {`): named from its first.
    const first = conditionStart(lines, i + 1);
    if (first && /^\s*(if|for|switch)\b/.test(lines[first - 1]!))
      return { line: first, text: lines[first - 1]!.trim(), last: { line: i + 1, text: l.trim() } };
    return undefined; // a composite literal or closure: keep looking outwards
  });
}

/**
 * The blocks around a line, innermost first, by brace depth (gofmt'd code: one opening brace per
 * block line), until `found` names one or the function's declaration is reached. A `case` at the
 * line's own depth is the innermost block.
 */
function outwards<T>(
  lines: string[],
  line: number,
  found: (i: number, l: string) => T | undefined,
  onCase = true,
): T | { line: number; text: string } | undefined {
  let depth = 0;
  for (let i = line - 2; i >= 0; i--) {
    const l = lines[i]!;
    const code = codeOf(l);
    if (onCase && /^\s*(case\b.*|default):\s*$/.test(code) && depth === 0)
      return { line: i + 1, text: l.trim() };
    depth += (code.match(/}/g) ?? []).length - (code.match(/{/g) ?? []).length;
    if (depth < 0) {
      if (/^func\b/.test(l)) return undefined;
      const got = found(i, l);
      if (got) return got;
      depth = 0;
    }
  }
  return undefined;
}

const codeOf = (l: string) => l.replace(/\/\/.*$/, '').replace(/"(?:[^"\\]|\\.)*"|`[^`]*`/g, '""');

/** The first line of a condition continued onto `line` (the lines before it end in `&&` or `||`), if any. */
function conditionStart(lines: string[], line: number): number | undefined {
  let first = line;
  while (first >= 2 && /(&&|\|\|)\s*$/.test(codeOf(lines[first - 2]!))) first--;
  return first < line ? first : undefined;
}

/**
 * A line that is an operand of a condition begun on an earlier line (`if a.PluginNames != nil &&` /
 * `(a.GenericAdmission.EnablePlugins != nil || …) {`): evaluated only when the operands before it
 * do not decide, `&&` after a false one and `||` after a true one skip it.
 */
export function conditionOperand(
  lines: string[],
  line: number,
): { line: number; text: string; op: '&&' | '||' } | undefined {
  const first = conditionStart(lines, line);
  if (!first || !/^\s*(if|for|switch|return)\b/.test(lines[first - 1]!)) return undefined;
  const op = /(&&|\|\|)\s*$/.exec(codeOf(lines[line - 2]!))![1] as '&&' | '||';
  return { line: first, text: lines[first - 1]!.trim(), op };
}

/**
 * The function literal around a line (`o.AreLegacyFlagsSet = func() bool {`), innermost first, that
 * runs only when something calls it; undefined in the declared function's own body.
 */
export function enclosingLiteral(
  lines: string[],
  line: number,
): { line: number; text: string } | undefined {
  // Not `defer func() {` or `go func() {`: those run whenever the function gets there.
  return outwards(
    lines,
    line,
    (i, l) =>
      /\bfunc\s*\(/.test(codeOf(l)) && !/^\s*(defer|go)\s+func\b/.test(l)
        ? { line: i + 1, text: l.trim() }
        : undefined,
    false,
  );
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
    // A pair opened and closed on the line (`errors := []error{}`) opens no block.
    const code = l
      .replace(/\/\/.*$/, '')
      .replace(/"(?:[^"\\]|\\.)*"|`[^`]*`|'(?:[^'\\]|\\.)*'/g, '""')
      .replace(/\{[^{}]*\}/g, '');
    const closes = (code.match(/}/g) ?? []).length;
    const opens = (code.match(/{/g) ?? []).length;
    if (/^\s*return\b/.test(code) && stack.length) stack.at(-1)!.returns = true;
    for (let k = 0; k < closes; k++) {
      const b = stack.pop();
      // `} else` continues the chain: the if alone does not end the function.
      if (b && b.isIf && b.returns && !/^\s*}\s*else\b/.test(code)) closed.push(b);
    }
    for (let k = 0; k < opens; k++) {
      stack.push({
        line: i + 1,
        text: l.trim(),
        isIf: k === opens - 1 && /^\s*if\b/.test(code),
        returns: false,
        parent: stack.at(-1)?.line ?? 0,
      });
    }
  }
  const parent = stack.at(-1)?.line ?? 0;
  return closed
    .filter((b) => b.parent === parent && !/^if\s+(.*;\s*)?err\s*!=\s*nil\s*{$/.test(b.text))
    .map((b) => ({ line: b.line, text: b.text }));
}
