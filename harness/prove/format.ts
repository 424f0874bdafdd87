// The prove report as text (one line per flag) and as Markdown (a table per verdict).
import type { ProveReport } from './index.ts';
import type { FlagResult, SiteResult } from './classify.ts';

export function value(f: FlagResult): string {
  if (!f.seen) return '';
  const judged =
    f.seen.match === undefined
      ? (f.seen.note ?? 'not compared')
      : f.seen.match
        ? 'matches the flag'
        : `differs from the flag (${f.value})`;
  return `${f.seen.value.slice(0, 80)} (${judged})`;
}

/** The site a flag's row shows: its first hit, else its first citation. */
export function bestSite(f: FlagResult): SiteResult | undefined {
  return f.sites.find((x) => x.status === 'hit') ?? f.sites[0];
}

/** What a site's row says: the value delve read there (judged against the flag), else why it was not hit. */
export function siteNote(s: SiteResult): string {
  const late = s.atShutdown ? 'at shutdown' : '';
  const against = s.status === 'hit' && s.ruledOut ? `; ${s.reason}` : '';
  return s.seen
    ? `${s.seen.value.slice(0, 60)}${s.seen.match === undefined ? '' : s.seen.match ? ' (matches)' : ' (differs)'}${late && ` (${late})`}${against}`
    : (s.reason ?? late);
}

function where(f: FlagResult): string {
  const s = bestSite(f);
  return s
    ? `${s.ref}${s.status === 'hit' ? ` ×${s.hits}${s.capped ? '+' : ''} in ${s.at!.function}` : ''}`
    : '';
}

/** The share that matters: hit of the sites the unit's flags do not rule out; and any hit they do rule out. */
function ruledIn(r: ProveReport): string {
  const c = r.counts;
  const open = c.sites - (c.sitesOff ?? 0);
  const share = open
    ? `${c.sitesHit} of the ${open} not ruled out (${((100 * c.sitesHit) / open).toFixed(1)}%)`
    : 'none not ruled out';
  return `: ${share}${c.contradictions ? `; ${c.contradictions} hit though ruled out: CONTRADICTION` : ''}`;
}

/** Whose flags ran: `kubeadm's flags (kubeadm v1.36.3 …): 28 passed, 28 run, 0 not provable`; empty for the unit's own. */
export function whose(r: ProveReport): string {
  const o = r.flagsOf;
  if (!o) return '';
  const run = o.flags.filter((t) => t.run !== undefined).length;
  return `${o.tool}'s flags (${o.command.join(' ')} at ${o.version}, read from ${o.source}): ${o.flags.length} passed, ${run} run on hardwire's host (${o.flags.filter((t) => t.run !== undefined && t.run !== t.original).length} of them at another path than ${o.tool}'s), ${o.flags.length - run} not provable; `;
}

/** What a flag's row adds with another tool's flags: that tool's own value, where the run's differs. */
function originalNote(f: FlagResult, r: ProveReport): string {
  return f.original !== undefined && r.flagsOf ? ` [${r.flagsOf.tool}: ${f.original}]` : '';
}

export function summary(r: ProveReport): string {
  const c = r.counts;
  return (
    `${whose(r)}${r.component} ${r.kubernetesVersion} on ${r.host}, ${r.date}: ${c.flags} flags: ${c.hit} hit, ${c.notHit} not hit, ${c.notProvable} not provable; ` +
    `${c.sitesHit} of ${c.sites} cited read sites hit (${c.sitesNotHit} not hit, ${c.sitesOff ?? 0} ruled out by the unit's flags, ${c.sitesUnset} without a tracepoint)${ruledIn(r)}; traced ${r.seconds.traced.toFixed(0)}s, in all ${r.seconds.total.toFixed(0)}s` +
    `${r.exited !== undefined ? `; the debuggee EXITED with ${r.exited}` : ''}` +
    `${r.shutdown ? `; then ${r.shutdown.signal}: ${r.shutdown.exitStatus === undefined ? 'did NOT exit' : `exited ${r.shutdown.exitStatus}`} after ${r.shutdown.seconds.toFixed(0)}s, ${r.flags.flatMap((f) => f.sites).filter((s) => s.atShutdown).length} sites first hit then` : ''}` +
    `${r.firstBoot ? `; ${r.firstBoot.done ? `a first boot in an empty data dir (${r.firstBoot.steps.length} host changes around it, each undone after)` : `no first boot: ${r.firstBoot.why}`}` : ''}` +
    `${r.changed?.length ? `; changed for the run (beside the unit): ${r.changed.map((c) => `--${c.flag}=${c.run} (unit: ${c.unit ?? 'not passed'})`).join(', ')}` : ''}`
  );
}

export function formatText(r: ProveReport): string {
  const w = Math.max(...r.flags.map((f) => f.flag.length)) + 2;
  const lines = r.flags.map(
    (f) =>
      `--${f.flag.padEnd(w)} ${f.verdict.padEnd(12)} ${f.verdict === 'hit' ? `${where(f)}${f.seen ? ` = ${value(f)}` : ''}` : (f.reason ?? '')}${originalNote(f, r)}`,
  );
  const list = (title: string, keep: (s: SiteResult) => boolean) => {
    const rows = r.flags.flatMap((f) =>
      f.sites.filter(keep).map((s) => `  --${f.flag} ${s.ref}: ${s.status}: ${s.reason ?? ''}`),
    );
    return rows.length ? `\n${title}:\n${rows.join('\n')}\n` : '';
  };
  const misses = list('cited sites not hit', (s) => s.status === 'not hit' || s.status === 'unset');
  const off = list(
    "cited sites the unit's flags rule out (not hit)",
    (s) => s.status === 'off' && s.live !== s.ruledOut,
  );
  const live = list(
    'cited sites a guard kept out at every stop delve made there (not hit, off in this run)',
    (s) => s.status === 'off' && s.live === s.ruledOut,
  );
  const against = list(
    "cited sites hit though the unit's flags or a guard delve evaluated rule them out (CONTRADICTION)",
    (s) => s.contradiction === true,
  );
  return `${lines.join('\n')}\n${misses}${off}${live}${against}\n${summary(r)}\n`;
}

export function formatMarkdown(r: ProveReport): string {
  const out = [
    `# flags prove: ${r.component}`,
    '',
    summary(r),
    '',
    `What the gate saw of the traced instance: \`${r.holder}\``,
    '',
    '| flag | verdict | site (hits, function delve stopped in) | value seen / reason |',
    '|---|---|---|---|',
  ];
  const cell = (t: string) => t.replace(/\|/g, '\\|');
  for (const f of r.flags)
    out.push(
      `| \`--${f.flag}\` | ${f.verdict} | ${cell(where(f))} | ${cell(f.verdict === 'hit' ? value(f) : (f.reason ?? ''))}${cell(originalNote(f, r))} |`,
    );
  if (r.flagsOf) {
    out.push('', `| flag | ${r.flagsOf.tool}'s value | value run | how |`, '|---|---|---|---|');
    for (const t of r.flagsOf.flags)
      out.push(
        `| \`--${t.flag}\` | ${cell(t.original)} | ${cell(t.run ?? 'not run')} | ${cell(t.notProvable ? `not provable: ${t.notProvable}` : t.how)} |`,
      );
  }
  out.push(
    '',
    '| flag | cited site | status | hits | value seen / reason |',
    '|---|---|---|---|---|',
  );
  for (const f of r.flags) {
    for (const s of f.sites)
      out.push(
        `| \`--${f.flag}\` | ${s.ref} | ${s.status} | ${s.hits}${s.capped ? '+' : ''} | ${cell(siteNote(s))} |`,
      );
  }
  return `${out.join('\n')}\n`;
}
