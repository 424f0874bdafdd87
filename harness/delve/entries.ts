// Where a tracepoint for one source line must sit so that every execution of the line stops there.
// Delve puts a `file:line` breakpoint at the line's first statement address in each function, but the
// Go compiler can lay a line out in several blocks, and the first may run on one path only: in a debug
// build of component-base v0.36.3, logs/api/v1/options.go:170 (`if c.Verbosity > math.MaxInt32 {`)
// starts with a jump pad entered only from line 164's branch, so a tracepoint there missed every run
// that took line 157's path. The line's entries are the blocks of it that control reaches from the
// function's start without passing the line first (a condition over several lines, or the join after
// an if's body, comes back to the line mid-way: no new execution). The tracepoint moves along delve's
// path, past pads only, to where the other entries join it; an entry that never joins is left out
// (it may skip the read, as a short-circuited operand does), as delve leaves it out.

/** One instruction of a function as delve's Disassemble returns it (api.AsmInstruction). */
export interface Insn {
  pc: number;
  file: string;
  line: number;
  text: string;
}

const JUMP = /^j(\w+)\s+0x([0-9a-f]+)\s*$/;

const target = (i: Insn): { to: number; always: boolean } | undefined => {
  const m = JUMP.exec(i.text.trim());
  return m ? { to: parseInt(m[2]!, 16), always: m[1] === 'mp' } : undefined;
};

const ends = (i: Insn): boolean => /^(ret|ud2|int3|jmp\s+(?!0x))/.test(i.text.trim());

/**
 * The address for a tracepoint at `file:line` in one function's instructions (address order), given
 * delve's pick: the first point on delve's path where every entry of the line that joins that path
 * has joined it.
 */
export function lineAddr(insns: Insn[], file: string, line: number, picked: number): number {
  const at = new Map(insns.map((i, n) => [i.pc, n]));
  const on = (n: number | undefined) =>
    n !== undefined && n < insns.length && insns[n]!.file === file && insns[n]!.line === line;
  const jumpedTo = new Set<number>();
  for (const i of insns) {
    const t = target(i);
    if (t && at.has(t.to)) jumpedTo.add(at.get(t.to)!);
  }
  const fallsThrough = (n: number) => !target(insns[n]!)?.always && !ends(insns[n]!);
  // From the start, and from each block no direct jump or fall-through reaches (a jump table's case,
  // a deferred return's resumption), up to the first instruction of the line on each path.
  // Alignment padding after a jump is skipped: the block behind it is a seed only if nothing jumps there.
  const nop = (n: number) => /^(data16 )?nop\b/.test(insns[n]!.text.trim());
  const seeds: number[] = [0];
  for (let n = 1; n < insns.length; n++) {
    if (fallsThrough(n - 1)) continue;
    let m = n;
    while (m < insns.length - 1 && nop(m)) m++;
    if (!jumpedTo.has(m)) seeds.push(m);
  }
  const seen = new Set<number>();
  const entries = new Set<number>();
  for (const todo = seeds; todo.length; ) {
    const n = todo.pop()!;
    if (n >= insns.length || seen.has(n)) continue;
    seen.add(n);
    if (on(n)) {
      entries.add(n);
      continue;
    }
    const t = target(insns[n]!);
    if (t && at.has(t.to)) todo.push(at.get(t.to)!);
    if (fallsThrough(n)) todo.push(n + 1);
  }
  /** The instructions run from n while control stays on the line, up to a branch or a call out. */
  const chain = (n: number | undefined): number[] => {
    const out: number[] = [];
    for (let k = n; on(k) && !out.includes(k!); ) {
      out.push(k!);
      const i: Insn = insns[k!]!;
      const t = target(i);
      if (t && !t.always) break;
      k = t ? at.get(t.to) : ends(i) ? undefined : k! + 1;
    }
    return out;
  };
  // Delve's path may only be moved past jump pads and padding: a later meeting point must not skip
  // code of the line that delve's own address would have counted (the read itself may be there).
  const path = chain(at.get(picked));
  const pad = (n: number) => nop(n) || target(insns[n]!)?.always === true;
  let best = 0;
  for (const e of entries) {
    const meet = chain(e)
      .map((k) => path.indexOf(k))
      .find((i) => i >= 0);
    if (meet !== undefined && meet > best && path.slice(0, meet).every(pad)) best = meet;
  }
  return path.length ? insns[path[best]!]!.pc : picked;
}
