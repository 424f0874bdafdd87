// From tracepoint outcomes to the verdicts the issue asks for: each flag hit (value seen), not hit
// (with the condition from the source that guards the site), or not provable (why).
import type { FlagPlan, PassedFlag } from './sites.ts';
import { normalizeFlagName, type ReadSite } from '../../core/flags/map.ts';
import type { SiteTrace } from './trace.ts';
import { compare, type Seen } from './values.ts';
import {
  conditionOperand,
  earlyReturns,
  enclosingCondition,
  enclosingLiteral,
  sameFunction,
  sourceLines,
} from './source.ts';
import { decideSite, type SiteStatus, type UnitFlags } from './decide.ts';
import { guardKey, keptOut, liveRuledOut, type GuardTrace } from './guards.ts';

export type Verdict = 'hit' | 'not hit' | 'not provable';

export interface SiteResult {
  ref: string;
  /** The cited line at its tag upstream. */
  url?: string;
  kind: string;
  /** The function the flag map names, and the one delve stopped in. */
  mapFunction?: string;
  /** unset: no tracepoint could be set at the line; off: not hit, and the unit's own flags rule it out (decide.ts). */
  status: SiteStatus;
  hits: number;
  capped: boolean;
  expr?: string;
  seen?: Seen;
  at?: { file: string; line: number; function: string };
  /** First hit after the gate, once the debuggee was sent SIGTERM: a read of its shutdown. */
  atShutdown?: true;
  /** Why the unit's flags rule the site out: an off site's reason; on a hit, a `contradiction` (unless the condition shares the line, decide.ts). */
  ruledOut?: string;
  /** Off in this run: a guard delve evaluated kept the read out at every stop (guards.ts); on an off site the unit's flags rule out, delve's confirmation. */
  live?: string;
  contradiction?: true;
  reason?: string;
}

/** `original`: with another tool's flags, its value where the run's differs (a path mapped to hardwire's file). */
export interface FlagResult {
  flag: string;
  value: string;
  original?: string;
  verdict: Verdict;
  reason?: string;
  seen?: Seen;
  sites: SiteResult[];
}

/**
 * The map's condition, when the analyzer found one: `conditional on --auto-tls:
 * embed/config.go:1515 \`if !cfg.ClientAutoTLS {\``; for a function reached only through that
 * branch, whose branch it is; and whether the unit passes the flag (`passed`: name -> value).
 */
export function conditionReason(
  s: ReadSite,
  passed: Map<string, string>,
  who = 'the unit',
): string | undefined {
  const c = s.condition;
  if (!c) return undefined;
  const at = c.at.replace(/^[^@]+@[^/]+\//, '');
  const where = c.caller
    ? `, in ${c.caller}, the only caller of ${s.function ?? 'its function'}`
    : '';
  const set = c.flags.filter((f) => passed.has(f));
  const unit = set.length
    ? `${who} passes ${set.map((f) => `--${f}=${passed.get(f)}`).join(', ')}, but the branch did not run before the gate passed`
    : `${who} does not pass ${c.flags.length > 1 ? 'any of them' : 'it'}`;
  return `conditional on ${c.flags.map((f) => `--${f}`).join(' or ')}: ${at} \`${c.text}\`${where}; ${unit}`;
}

function notHitReason(t: SiteTrace, passed: Map<string, string>, who: string): string {
  const s = t.site.site;
  const when =
    t.gateHits === undefined
      ? 'before the gate passed'
      : 'before the gate passed, nor in the shutdown after it';
  const mapped = conditionReason(s, passed, who);
  if (mapped) return mapped;
  const lines = sourceLines(s.module, s.version, s.file);
  const fn = s.function ?? 'its function';
  const operand = lines ? conditionOperand(lines, s.line) : undefined;
  if (operand)
    return `conditional path: an operand of the condition of line ${operand.line} \`${operand.text}\` in ${fn}, which \`${operand.op}\` skips while the operands before it decide; it was not evaluated ${when}`;
  const cond = lines ? enclosingCondition(lines, s.line) : undefined;
  const through = cond?.last ? ` … line ${cond.last.line} \`${cond.last.text}\`` : '';
  if (cond)
    return `conditional path: guarded by line ${cond.line} \`${cond.text}\`${through} in ${fn}; that branch (or the function) did not run ${when}`;
  const literal = lines ? enclosingLiteral(lines, s.line) : undefined;
  if (literal)
    return `in the function literal of line ${literal.line} \`${literal.text}\` in ${fn}: nothing called it ${when}`;
  const early = lines ? earlyReturns(lines, s.line) : [];
  if (early.length)
    return `conditional path: after the early return${early.length > 1 ? 's' : ''} of ${early.map((e) => `line ${e.line} \`${e.text}\``).join(', ')} in ${s.function ?? 'its function'}; one of them returned first (or the function did not run) ${when}`;
  return `${s.function ?? 'its function'} did not run ${when} (reached later, or on another path)`;
}

function siteResult(
  t: SiteTrace,
  flag: PassedFlag,
  unit: UnitFlags,
  who: string,
  guards: Map<string, GuardTrace>,
): SiteResult {
  const s = t.site.site;
  const base = {
    ref: t.site.ref,
    url: s.url,
    kind: s.kind,
    ...(s.function ? { mapFunction: s.function } : {}),
    hits: t.hits,
    capped: t.capped,
    ...(t.site.expr ? { expr: t.site.expr } : {}),
  };
  const decided = decideSite(
    s,
    t.unset ? 'unset' : t.hits === 0 || !t.first ? 'not hit' : 'hit',
    unit,
  );
  const live = t.unset ? undefined : liveRuledOut(s, guards);
  if (decided.status === 'off')
    return {
      ...base,
      status: 'off',
      ruledOut: decided.ruledOut!,
      reason: decided.ruledOut!,
      ...(live ? { live } : {}),
    };
  if (live && (t.hits === 0 || !t.first))
    return { ...base, status: 'off', ruledOut: live, live, reason: live };
  if (t.unset) {
    const why = t.unset.linked
      ? `the citation is wrong: ${s.function ?? 'its function'} is in the binary but has no statement at that line (${t.unset.message})`
      : `${s.package}.${s.function} is not in the binary (the linker dropped it: unreachable from its main); the analyzer cites code this component never runs`;
    return { ...base, status: 'unset', reason: `no tracepoint: ${why}` };
  }
  if (t.hits === 0 || !t.first)
    return { ...base, status: 'not hit', reason: notHitReason(t, unit.passed, who) };
  const at = { file: t.first.file, line: t.first.line, function: t.first.function };
  // The first hit whose value is the flag's, else the first: a conversion of the defaults may read before the flag applies.
  const judged = t.values.map((v) => compare(v, flag.value));
  const seen = judged.find((j) => j.match === true) ?? judged[0];
  const moved =
    s.function && !sameFunction(s.function, at.function)
      ? `delve stopped in ${at.function}, the map names ${s.function}`
      : undefined;
  // A line that does not spell the selector reads something else: hit, but the citation is wrong.
  const word = s.selector.replace(/^\./, '');
  const text = sourceLines(s.module, s.version, s.file)?.[s.line - 1];
  const blind =
    text !== undefined && !text.includes(word)
      ? `the citation is wrong: the line does not spell ${word}: ${text.trim()}`
      : undefined;
  const contradiction = !decided.ruledOut
    ? undefined
    : decided.contradiction
      ? `CONTRADICTION: hit, though ${decided.ruledOut}`
      : `hit at the line, which also holds its condition (evaluated whether or not the read runs); the read itself is ${decided.ruledOut}`;
  // A guard that kept the read out at every stop, and yet the read ran: the live reasoning is wrong somewhere.
  const keptButHit = (s.guards ?? [])
    .map((g) => {
      const gt = guards.get(guardKey(g));
      return gt && keptOut(gt, g);
    })
    .find(Boolean);
  const liveContradiction = keptButHit ? `CONTRADICTION: hit, though ${keptButHit.why}` : undefined;
  const reason = [contradiction, liveContradiction, moved, blind].filter(Boolean).join('; ');
  const late = t.gateHits === 0 ? { atShutdown: true as const } : {};
  return {
    ...base,
    status: 'hit',
    at,
    ...late,
    ...(seen ? { seen } : {}),
    ...(decided.ruledOut ? { ruledOut: decided.ruledOut } : {}),
    ...(decided.contradiction || liveContradiction ? { contradiction: true as const } : {}),
    ...(reason ? { reason } : {}),
  };
}

/**
 * `defaultOf`: a flag's default in the map, for the flags the unit does not pass; `who` passes the
 * flags: the unit, or another tool (`kubeadm`) whose flags ran; `guards`: what delve saw at the sites' guards.
 */
export function classify(
  plans: FlagPlan[],
  traces: SiteTrace[],
  defaultOf: (flag: string) => string | undefined = () => undefined,
  who = 'the unit',
  guards: Map<string, GuardTrace> = new Map(),
): FlagResult[] {
  const unit: UnitFlags = {
    passed: new Map(plans.map((p) => [normalizeFlagName(p.flag.name), p.flag.value])),
    defaultOf,
  };
  return plans.map(({ flag, entry, sites }) => {
    const mine = sites
      .map((site) => traces.find((t) => t.site === site)!)
      .map((t) => siteResult(t, flag, unit, who, guards));
    const head = { flag: flag.name, value: flag.value, sites: mine };
    if (!entry) return { ...head, verdict: 'not provable' as const, reason: 'not in the flag map' };
    if (mine.length === 0)
      return {
        ...head,
        verdict: 'not provable' as const,
        reason: `the map cites no read site (${entry.readBy})`,
      };
    const hit =
      mine.find((r) => r.status === 'hit' && r.seen?.match !== undefined) ??
      mine.find((r) => r.status === 'hit');
    if (hit) return { ...head, verdict: 'hit' as const, ...(hit.seen ? { seen: hit.seen } : {}) };
    if (mine.every((r) => r.status === 'unset'))
      return { ...head, verdict: 'not provable' as const, reason: mine[0]!.reason! };
    return {
      ...head,
      verdict: 'not hit' as const,
      reason: (mine.find((r) => r.status === 'not hit') ?? mine.find((r) => r.status === 'off'))!
        .reason!,
    };
  });
}
