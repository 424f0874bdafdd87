// Go boolean expressions as text (a condition the flag map records): split at && and || outside
// parentheses, brackets, braces and strings, and evaluated three-valued on whatever knows an operand
// (decide.ts: the unit's flags; guards.ts: what delve read at the line).

export type Tri = boolean | undefined;

/** `a && b || !(c)`: three-valued, an operand known only where `leaf` knows it (`negated`: under an odd number of `!`). */
export function evaluate(
  expr: string,
  leaf: (operand: string, negated: boolean) => Tri,
  negated = false,
): Tri {
  const e = unparen(expr.trim());
  const or = splitTop(e, '||');
  if (or.length > 1) {
    const vs = or.map((x) => evaluate(x, leaf, negated));
    return vs.includes(true) ? true : vs.every((v) => v === false) ? false : undefined;
  }
  const and = splitTop(e, '&&');
  if (and.length > 1) {
    const vs = and.map((x) => evaluate(x, leaf, negated));
    return vs.includes(false) ? false : vs.every((v) => v === true) ? true : undefined;
  }
  if (e.startsWith('!') && !e.startsWith('!=')) {
    const v = evaluate(e.slice(1), leaf, !negated);
    return v === undefined ? undefined : !v;
  }
  return leaf(e, negated);
}

/** The operands of `e` at its top level (outside parentheses, brackets, braces and strings), split at `op`. */
function splitTop(e: string, op: '&&' | '||'): string[] {
  const out: string[] = [];
  let depth = 0,
    from = 0,
    quote = '';
  for (let i = 0; i < e.length; i++) {
    const ch = e[i]!;
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = '';
    } else if (ch === '"' || ch === '`' || ch === "'") quote = ch;
    else if ('([{'.includes(ch)) depth++;
    else if (')]}'.includes(ch)) depth--;
    else if (depth === 0 && e.startsWith(op, i)) {
      out.push(e.slice(from, i).trim());
      from = i + 2;
      i++;
    }
  }
  out.push(e.slice(from).trim());
  return out;
}

/** `(x)` as `x`, when the parentheses enclose the whole expression. */
function unparen(e: string): string {
  if (!e.startsWith('(') || !e.endsWith(')')) return e;
  let depth = 0;
  for (let i = 0; i < e.length; i++) {
    if (e[i] === '(') depth++;
    else if (e[i] === ')' && --depth === 0 && i < e.length - 1) return e;
  }
  return unparen(e.slice(1, -1).trim());
}
