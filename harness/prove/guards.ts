// Guards evaluated live (issue 25). Each branch a cited read needs in its own function (the map's
// `guards`, from the analyzer's guards.go) gets a tracepoint at its line, where delve evaluates
// the condition and each of its operands before the line runs. A read not hit whose guard delve
// saw keep it out at every stop is explained by the run itself: off in this run. A read hit though
// its guard kept it out at every stop would be a contradiction of this reasoning, and is reported.
import type { ReadGuard, ReadSite } from '../../core/flags/map.ts';
import type { DlvVariable } from '../delve/rpc.ts';
import { evaluate } from './expr.ts';

/** One tracepoint's worth of guard: where, and what delve evaluates there (the whole condition first, then each operand). */
export interface GuardProbe {
  key: string;
  file: string;
  line: number;
  guard: ReadGuard;
  vars: string[];
}

/** What the run saw at a guard: its stops, each with the values of `probe.vars`. */
export interface GuardTrace {
  probe: GuardProbe;
  hits: number;
  capped: boolean;
  unset?: string;
  evals: DlvVariable[][];
}

/** The operands of a condition, as decide.ts's evaluate hands them to its leaf (no `!`, no outer parentheses). */
export function operands(expr: string): string[] {
  const out: string[] = [];
  evaluate(expr, (o) => {
    if (!out.includes(o)) out.push(o);
    return undefined;
  });
  return out;
}

export const guardKey = (g: ReadGuard) => `${g.at}|${g.expr}`;

/** The probes for these sites' guards, one per distinct guard; `named` gives a `module@version/file` as the binary's DWARF names it. */
export function guardProbes(
  sites: ReadSite[],
  named: (module: string, version: string, file: string) => string,
): GuardProbe[] {
  const out = new Map<string, GuardProbe>();
  for (const g of sites.flatMap((s) => s.guards ?? [])) {
    const m = /^(.+?)@([^/]+)\/(.+):(\d+)$/.exec(g.at);
    if (!m || out.has(guardKey(g))) continue;
    const ops = operands(g.expr);
    out.set(guardKey(g), {
      key: guardKey(g),
      file: named(m[1]!, m[2]!, m[3]!),
      line: Number(m[4]),
      guard: g,
      vars: [g.expr, ...ops.filter((o) => o !== g.expr)],
    });
  }
  return [...out.values()];
}

const boolOf = (v: DlvVariable | undefined): boolean | undefined =>
  v && !v.unreadable && v.kind === 1 && (v.value === 'true' || v.value === 'false')
    ? v.value === 'true'
    : undefined;

/** The condition's value at one stop: delve's own for the whole, else from the operands it could read (three-valued). */
export function valueAt(probe: GuardProbe, vals: DlvVariable[]): boolean | undefined {
  const whole = boolOf(vals[0]);
  if (whole !== undefined) return whole;
  return evaluate(probe.guard.expr, (o) => {
    const i = probe.vars.indexOf(o);
    return i > 0 ? boolOf(vals[i]) : undefined;
  });
}

/** The operands delve read at a stop, as `x == y: false`. */
function shown(probe: GuardProbe, vals: DlvVariable[]): string {
  return probe.vars
    .slice(1)
    .map((o, i) => [o, vals[i + 1]] as const)
    .filter(([, v]) => boolOf(v) !== undefined)
    .map(([o, v]) => `\`${o}\`: ${v!.value}`)
    .join(', ');
}

/**
 * Whether guard g of a read kept it out at every stop the run made at its line: stopped at least once,
 * never past the hit cap (stops after it are unseen), each stop's value decided and the one the
 * read cannot run under. Undefined when it did not. The sense is the read's own (g): reads in an if's
 * body and past its early return share one probe at that line.
 */
export function keptOut(gt: GuardTrace, g: ReadGuard): { value: boolean; why: string } | undefined {
  if (gt.unset || gt.capped || gt.hits === 0 || gt.evals.length !== gt.hits) return undefined;
  const values = gt.evals.map((e) => valueAt(gt.probe, e));
  const blocking = !!g.negated;
  if (!values.every((v) => v === blocking)) return undefined;
  const at = g.at.replace(/^[^@]+@[^/]+\//, '');
  const ops = shown(gt.probe, gt.evals[0]!);
  const times =
    gt.hits === 1
      ? 'at the one stop delve made there'
      : `at each of the ${gt.hits} stops delve made there`;
  return {
    value: blocking,
    why: `${at} \`${g.text}\` was ${blocking} ${times}${g.negated ? ' (the read runs only when it is false)' : ''}${ops ? ` (${ops})` : ''}`,
  };
}

/** The innermost of a site's guards that the run saw keep it out, as the reason the site is off in this run. */
export function liveRuledOut(site: ReadSite, traces: Map<string, GuardTrace>): string | undefined {
  for (const g of site.guards ?? []) {
    const gt = traces.get(guardKey(g));
    const k = gt && keptOut(gt, g);
    if (k) return `ruled out in this run: ${k.why}`;
  }
  return undefined;
}
