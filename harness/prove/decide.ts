// Whether the unit's own flags rule a conditional read out (issue 25). The flag map records the
// condition a read needs (the analyzer's cond.go): the flags of which one must be set to a
// non-default value, the condition's Go expression (true, or false when `negated`), and each of
// its operands read from a flag's field. Decided here on the values the unit passes (the map's
// default for a flag it does not pass): a read is ruled out when its condition needs a flag the
// unit does not pass, or when a simple comparison (`== 0`, `!= ""`, `len(x) == 0`, `!x`, a bool)
// on the unit's values makes the expression what the read cannot run under. A condition on
// anything else (a field set by code, the environment) stays undecided.
import {
  normalizeFlagName,
  type FlagMap,
  type ReadCondition,
  type ReadSite,
} from '../../core/flags/map.ts';
import { passedFlags } from './sites.ts';
import { evaluate, type Tri } from './expr.ts';

/** The unit's flags (normalized name -> value) and the map's default of each flag. */
export interface UnitFlags {
  passed: Map<string, string>;
  defaultOf: (flag: string) => string | undefined;
}

/** Flags whose value may come from a file instead: with one passed, an unpassed flag's default proves nothing. */
const CONFIG_FILES = ['config', 'config-file'];

/** Why the unit rules the read out (`condition at file:line, and the unit's values`), or undefined. */
export function ruledOut(c: ReadCondition, unit: UnitFlags): string | undefined {
  if (c.expr === undefined) return undefined; // callers under different conditions: none decides
  const fromFile = CONFIG_FILES.some((f) => unit.passed.has(f));
  const where = `${c.at.replace(/^[^@]+@[^/]+\//, '')} \`${c.text}\`${c.negated ? ' (the read runs only when it is false)' : ''}`;
  if (!fromFile && c.flags.length > 0 && c.flags.every((f) => !unit.passed.has(f))) {
    return `ruled out by the unit's flags: ${where} needs ${c.flags.map((f) => `--${f}`).join(' or ')} set, and the unit does not pass ${c.flags.length > 1 ? 'any of them' : 'it'}`;
  }
  // Each decided operand, with the unit's value that decides it and what it makes of the whole (under its `!`s).
  const used: { why: string; effect: boolean }[] = [];
  const value = evaluate(c.expr, (operand, negated) => {
    const why: string[] = [];
    const v = atom(operand, c.tests ?? {}, unit, fromFile, why);
    if (v !== undefined) used.push({ why: why[0]!, effect: v !== negated });
    return v;
  });
  if (value === undefined || value !== !!c.negated) return undefined;
  // The operands that make the whole what it is (the false ones of a false &&).
  const decisive = [...new Set(used.filter((u) => u.effect === value).map((u) => u.why))];
  return `ruled out by the unit's flags: ${where} is ${value}, since ${decisive.join(', ')}`;
}

/** One comparison or bool operand on a flag's field, on the unit's value (or the flag's default). */
function atom(
  operand: string,
  tests: Record<string, string[]>,
  unit: UnitFlags,
  fromFile: boolean,
  used: string[],
): Tri {
  const m = /^(.+?)\s*(==|!=|>=|<=|>|<)\s*(.+)$/.exec(operand);
  let subject = m ? m[1]! : operand;
  let op = m?.[2];
  let k = m?.[3];
  if (m && tests[k!] && !tests[subject]) [subject, k, op] = [k!, subject, flip(op!)];
  const len = /^len\((.+)\)$/.exec(subject);
  const field = len ? len[1]! : subject;
  const flags = tests[field];
  if (flags?.length !== 1) return undefined;
  const flag = flags[0]!;
  const passed = unit.passed.get(flag);
  if (passed === undefined && fromFile) return undefined;
  const v = passed ?? unit.defaultOf(flag);
  if (v === undefined) return undefined;
  const result = len ? lenCompare(v, op, k) : op === undefined ? bool(v) : compare(v, op, k!);
  if (result !== undefined)
    used.push(
      passed === undefined
        ? `the unit does not pass --${flag} (default ${JSON.stringify(v)})`
        : `the unit passes --${flag}=${v}`,
    );
  return result;
}

const EMPTY = ['', '[]', 'map[]'];

function lenCompare(v: string, op: string | undefined, k: string | undefined): Tri {
  if (k !== '0') return undefined;
  const empty = EMPTY.includes(v);
  return op === '==' ? empty : op === '!=' || op === '>' ? !empty : undefined;
}

function bool(v: string): Tri {
  return v === 'true' ? true : v === 'false' ? false : undefined;
}

function compare(v: string, op: string, k: string): Tri {
  if (k === 'nil' && (op === '==' || op === '!=')) return (op === '==') === EMPTY.includes(v);
  if (k === 'true' || k === 'false') {
    const b = bool(v);
    return b === undefined || (op !== '==' && op !== '!=')
      ? undefined
      : (op === '==') === (b === (k === 'true'));
  }
  const str = /^"((?:[^"\\]|\\.)*)"$/.exec(k);
  if (str) return op === '==' ? v === JSON.parse(k) : op === '!=' ? v !== JSON.parse(k) : undefined;
  if (!/^-?\d+(\.\d+)?$/.test(k) || !/^-?\d+(\.\d+)?$/.test(v)) return undefined;
  const [a, b] = [Number(v), Number(k)];
  return { '==': a === b, '!=': a !== b, '>': a > b, '<': a < b, '>=': a >= b, '<=': a <= b }[op];
}

function flip(op: string): string {
  return ({ '>': '<', '<': '>', '>=': '<=', '<=': '>=' } as Record<string, string>)[op] ?? op;
}

export type SiteStatus = 'hit' | 'not hit' | 'off' | 'unset';

/**
 * A cited site's status from what the trace saw (hit, not hit, or no tracepoint) and the unit's
 * flags: `off` for a miss the unit's flags rule out; a hit that they rule out stays a hit, with
 * `ruledOut` set, and is a `contradiction` to report unless the condition is on the site's own line
 * (`case x != "" && y != "":`, the read in the right operand): delve's tracepoint is the line's, and
 * stops there whenever the condition is evaluated, read or not. Pure, so that a record's statuses
 * can be re-derived from the flag map and the run's argv.
 */
export function decideSite(
  site: ReadSite,
  traced: 'hit' | 'not hit' | 'unset',
  unit: UnitFlags,
): { status: SiteStatus; ruledOut?: string; contradiction?: true } {
  if (traced === 'unset') return { status: 'unset' };
  const off = site.condition ? ruledOut(site.condition, unit) : undefined;
  if (traced === 'hit')
    return {
      status: 'hit',
      ...(off ? { ruledOut: off } : {}),
      ...(off && !onItsLine(site) ? { contradiction: true as const } : {}),
    };
  return off ? { status: 'off', ruledOut: off } : { status: 'not hit' };
}

/** The site's condition is on the site's own line. */
export function onItsLine(site: ReadSite): boolean {
  return site.condition?.at === `${site.module}@${site.version}/${site.file}:${site.line}`;
}

/** The unit's flags from its argv (argv[0] the binary), with the map's defaults. */
export function unitFlags(argv: string[], map: FlagMap): UnitFlags {
  const defaults = new Map(map.flags.map((f) => [f.name, f.default]));
  return {
    passed: new Map(passedFlags(argv.slice(1)).map((f) => [normalizeFlagName(f.name), f.value])),
    defaultOf: (f) => defaults.get(f),
  };
}
