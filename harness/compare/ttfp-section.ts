// Whole planes and time to first Pod (issue 23): per plane, whether a worker Node is Ready with the
// busybox Pod Running on it, and the four phase boundaries its watcher saw (ttfp-watch.ts).
import { PLANES } from '../planes/types.ts';
import { BUILT_PLANES } from '../planes/plane-names.ts';
import type { PlaneData, PlaneName } from '../planes/types.ts';
import { TTFP_PHASES, type TtfpPhase, type TtfpWatch } from '../planes/ttfp-watch.ts';

export const PHASE_LABEL: Record<TtfpPhase, string> = {
  certs: 'certs (apiserver cert on the host)',
  controlPlaneReady: 'control plane ready (/readyz ok)',
  nodeReady: 'node Ready (the worker)',
  podRunning: 'Pod Running (on the worker)',
};

export interface TtfpPlane {
  whole: boolean;
  /** What is missing when not whole, one phrase. */
  missing?: string;
  worker?: string;
  pod?: string;
  /** Each phase: ms since t0 at its end, and its own length; absent when the plane was not bare. */
  phases?: { phase: TtfpPhase; atMs: number; ms: number }[];
  totalMs?: number;
  /** Why there is no time (the plane was not bare, or not collected). */
  unmeasured?: string;
  pollMs?: number;
}

function missingOf(w: TtfpWatch): string | undefined {
  const seen = TTFP_PHASES.filter((p) => w.at[p] !== undefined);
  if (seen.length === TTFP_PHASES.length) return undefined;
  const next = TTFP_PHASES[seen.length]!;
  if (next === 'podRunning') return `no Pod ${w.pod} Running on worker ${w.worker}`;
  if (next === 'nodeReady') return `no worker Node ${w.worker} Ready`;
  return `never saw ${PHASE_LABEL[next]}`;
}

export function ttfpPlane(d: PlaneData): TtfpPlane {
  // A cluster of yours is only read: compare starts no Pod on it and did not see it built.
  if (d.plane === 'yours') {
    const why = d.collected ? 'a cluster compare only reads: no Pod started, no build seen' : d.why;
    return { whole: false, missing: why, unmeasured: why };
  }
  if (!d.collected) return { whole: false, missing: 'not collected', unmeasured: 'not collected' };
  const w = d.ttfp;
  if (!w) return { whole: false, missing: 'no worker watched', unmeasured: 'no worker watched' };
  const missing = missingOf(w);
  const base = {
    whole: !missing,
    ...(missing ? { missing } : {}),
    worker: w.worker,
    pod: w.pod,
    pollMs: w.pollMs,
  };
  if (!w.bare)
    return {
      ...base,
      unmeasured: 'the plane was already installed when compare started (not a bare lab)',
    };
  if (missing) return { ...base, unmeasured: missing };
  let prev = 0;
  const phases = TTFP_PHASES.map((phase) => {
    const atMs = w.at[phase]!;
    const ms = atMs - prev;
    prev = atMs;
    return { phase, atMs, ms };
  });
  return { ...base, phases, totalMs: prev };
}

export function ttfpSection(planes: Record<PlaneName, PlaneData>): Record<PlaneName, TtfpPlane> {
  return Object.fromEntries(PLANES.map((p) => [p, ttfpPlane(planes[p])])) as Record<
    PlaneName,
    TtfpPlane
  >;
}

/** compare's verdict: undefined when the three planes it builds are whole, else one line naming each plane and what it lacks. */
export function wholeVerdict(t: Record<PlaneName, TtfpPlane>): string | undefined {
  const bad = BUILT_PLANES.filter((p) => !t[p].whole);
  return bad.length
    ? `not whole: ${bad.map((p) => `${p} (${t[p].missing})`).join('; ')}`
    : undefined;
}

const sec = (ms: number | undefined) => (ms === undefined ? '—' : `${(ms / 1000).toFixed(1)} s`);
const wholeCell = (t: TtfpPlane) =>
  t.whole ? `whole: Pod ${t.pod} Running on worker ${t.worker}` : `NOT whole: ${t.missing}`;
const phaseMs = (t: TtfpPlane, ph: TtfpPhase) => t.phases?.find((x) => x.phase === ph)?.ms;

export function ttfpSummary(t: Record<PlaneName, TtfpPlane>): string[] {
  const out = [
    '',
    "time to first Pod (bare lab to busybox Running on a worker; each phase's own length):",
  ];
  for (const p of PLANES) {
    const x = t[p];
    out.push(
      `  ${p.padEnd(9)} ${wholeCell(x)}; ${x.totalMs !== undefined ? `total ${sec(x.totalMs)} = ${TTFP_PHASES.map((ph) => `${ph} ${sec(phaseMs(x, ph))}`).join(' + ')}` : `not measured: ${x.unmeasured}`}`,
    );
  }
  return out;
}

export function ttfpMarkdown(t: Record<PlaneName, TtfpPlane>): string[] {
  const out = ['## Whole planes', '', '| plane | whole | worker | Pod |', '|---|---|---|---|'];
  for (const p of PLANES)
    out.push(
      `| ${p} | ${t[p].whole ? 'whole' : `**not whole**: ${t[p].missing}`} | ${t[p].worker ?? '—'} | ${t[p].pod ?? '—'} |`,
    );
  out.push(
    '',
    '## Time to first Pod',
    '',
    "From the bare lab (hosts up, nothing installed) to the busybox Pod Running on a worker, one monotonic clock per plane, the same four polls on every plane (`harness/planes/ttfp-watch.ts`). Each cell is the phase's own length.",
    '',
  );
  out.push(
    `| plane | ${TTFP_PHASES.map((ph) => PHASE_LABEL[ph]).join(' | ')} | total |`,
    `|---|${TTFP_PHASES.map(() => '---|').join('')}---|`,
  );
  for (const p of PLANES) {
    const x = t[p];
    out.push(
      x.totalMs !== undefined
        ? `| ${p} | ${TTFP_PHASES.map((ph) => sec(phaseMs(x, ph))).join(' | ')} | ${sec(x.totalMs)} |`
        : `| ${p} | ${TTFP_PHASES.map(() => '—').join(' | ')} | not measured: ${x.unmeasured} |`,
    );
  }
  out.push('');
  return out;
}

export function ttfpHtml(t: Record<PlaneName, TtfpPlane>, esc: (s: string) => string): string {
  const whole = PLANES.map(
    (p) =>
      `<tr data-plane="${p}"><td>${p}</td><td>${esc(t[p].whole ? 'whole' : `not whole: ${t[p].missing}`)}</td><td>${esc(t[p].worker ?? '—')}</td><td>${esc(t[p].pod ?? '—')}</td></tr>`,
  ).join('');
  const rows = PLANES.map((p) => {
    const x = t[p];
    const cells =
      x.totalMs !== undefined
        ? TTFP_PHASES.map((ph) => `<td>${sec(phaseMs(x, ph))}</td>`).join('') +
          `<td>${sec(x.totalMs)}</td>`
        : `${TTFP_PHASES.map(() => '<td>—</td>').join('')}<td>${esc(`not measured: ${x.unmeasured}`)}</td>`;
    return `<tr data-plane="${p}"><td>${p}</td>${cells}</tr>`;
  }).join('');
  return `<section id="whole"><h2>Whole planes</h2><table><thead><tr><th>plane</th><th>whole</th><th>worker</th><th>Pod</th></tr></thead><tbody>${whole}</tbody></table></section>
<section id="ttfp"><h2>Time to first Pod</h2><p>From the bare lab (hosts up, nothing installed) to the busybox Pod Running on a worker; one monotonic clock per plane, the same four polls on every plane. Each cell is the phase's own length.</p><table><thead><tr><th>plane</th>${TTFP_PHASES.map((ph) => `<th>${esc(PHASE_LABEL[ph])}</th>`).join('')}<th>total</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}
