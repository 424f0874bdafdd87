// Whole planes and time to first Pod, without a lab: the watcher on fake checks (its clock, its order,
// "bare"), and the verdict compare exits on.
import { describe, expect, it } from 'vitest';
import {
  watchTtfp,
  TTFP_PHASES,
  type TtfpChecks,
  type TtfpWatch,
} from '../harness/planes/ttfp-watch.ts';
import {
  ttfpPlane,
  ttfpSection,
  wholeVerdict,
  ttfpMarkdown,
  ttfpHtml,
  ttfpSummary,
} from '../harness/compare/ttfp-section.ts';
import { emptyPlane } from '../harness/planes/types.ts';
import { NOT_ASKED } from '../harness/planes/plane-names.ts';

/** Checks that start holding `after` ms from now, in a given order. */
function timed(after: Record<string, number>): TtfpChecks {
  const t0 = performance.now();
  const at = (ms: number) => async () => performance.now() - t0 >= ms;
  return {
    certs: at(after.certs!),
    controlPlaneReady: at(after.controlPlaneReady!),
    nodeReady: at(after.nodeReady!),
    podRunning: at(after.podRunning!),
  };
}

const target = { worker: 'node2', pod: 'default/busybox-worker' };

function planeWith(w: TtfpWatch | undefined) {
  const d = emptyPlane('kubeadm', 'x', true);
  if (w) d.ttfp = w;
  return d;
}

describe('time to first Pod watcher', () => {
  it('takes each boundary on its own monotonic clock, in phase order, after the condition holds', async () => {
    const w = await watchTtfp(
      timed({ certs: 60, controlPlaneReady: 150, nodeReady: 150, podRunning: 260 }),
      target,
      20,
    ).finish(5000);
    expect(w.bare).toBe(true);
    const at = TTFP_PHASES.map((p) => w.at[p]!);
    expect(at[0]).toBeGreaterThanOrEqual(60);
    expect(at[1]).toBeGreaterThanOrEqual(150);
    expect(at[2]).toBeGreaterThanOrEqual(at[1]!);
    expect(at[3]).toBeGreaterThanOrEqual(260);
    expect(at[3]).toBeLessThan(2000);
  });

  it('a plane already installed at t0 is not bare, and is still whole when its Pod runs', async () => {
    const w = await watchTtfp(
      timed({ certs: 0, controlPlaneReady: 0, nodeReady: 0, podRunning: 0 }),
      target,
      20,
    ).finish(5000);
    expect(w.bare).toBe(false);
    const t = ttfpPlane(planeWith(w));
    expect(t).toMatchObject({ whole: true, worker: 'node2' });
    expect(t.phases).toBeUndefined();
    expect(t.unmeasured).toMatch(/already installed/);
  });

  it('finish stops a watcher whose Pod never runs, and says what was last seen', async () => {
    const w = await watchTtfp(
      {
        ...timed({ certs: 30, controlPlaneReady: 30, nodeReady: 30, podRunning: 0 }),
        podRunning: async () => false,
      },
      target,
      10,
    ).finish(300);
    expect(w.bare).toBe(true);
    expect(w.at.nodeReady).toBeDefined();
    expect(w.at.podRunning).toBeUndefined();
    expect(ttfpPlane(planeWith(w))).toMatchObject({
      whole: false,
      missing: 'no Pod default/busybox-worker Running on worker node2',
    });
  });
});

describe('whole planes and the verdict', () => {
  const whole: TtfpWatch = {
    ...target,
    bare: true,
    at: { certs: 1000, controlPlaneReady: 4000, nodeReady: 9000, podRunning: 12000 },
    pollMs: 500,
  };

  it('phases: each its own length, in order, summing to the total', () => {
    const t = ttfpPlane(planeWith(whole));
    expect(t.whole).toBe(true);
    expect(t.phases).toEqual([
      { phase: 'certs', atMs: 1000, ms: 1000 },
      { phase: 'controlPlaneReady', atMs: 4000, ms: 3000 },
      { phase: 'nodeReady', atMs: 9000, ms: 5000 },
      { phase: 'podRunning', atMs: 12000, ms: 3000 },
    ]);
    expect(t.totalMs).toBe(12000);
  });

  it('a plane without a worker Pod makes the verdict non-empty, naming the plane and what is missing', () => {
    const noPod = planeWith({
      ...whole,
      at: { certs: 1000, controlPlaneReady: 4000, nodeReady: 9000 },
    });
    const planes = {
      hardwire: { ...planeWith(whole), plane: 'hardwire' as const },
      kubeadm: noPod,
      k0s: { ...planeWith(whole), plane: 'k0s' as const },
      yours: emptyPlane('yours', NOT_ASKED),
    };
    const t = ttfpSection(planes);
    expect(wholeVerdict(t)).toBe(
      'not whole: kubeadm (no Pod default/busybox-worker Running on worker node2)',
    );
    expect(wholeVerdict(ttfpSection({ ...planes, kubeadm: planeWith(whole) }))).toBeUndefined();
    // Not collected, or no watcher: not whole either.
    expect(wholeVerdict(ttfpSection({ ...planes, kubeadm: emptyPlane('kubeadm', 'boom') }))).toBe(
      'not whole: kubeadm (not collected)',
    );
    expect(
      wholeVerdict(
        ttfpSection({ ...planes, k0s: planeWith(undefined), kubeadm: planeWith(whole) }),
      ),
    ).toBe('not whole: k0s (no worker watched)');
    expect(ttfpMarkdown(t).join('\n')).toMatch(
      /\| kubeadm \| \*\*not whole\*\*: no Pod default\/busybox-worker Running on worker node2 \|/,
    );
    expect(ttfpHtml(t, (s) => s)).toMatch(
      /<tr data-plane="kubeadm"><td>kubeadm<\/td><td>not whole: no Pod/,
    );
    expect(ttfpSummary(t).join('\n')).toMatch(
      /hardwire\s+whole: Pod default\/busybox-worker Running on worker node2; total 12\.0 s = certs 1\.0 s \+ controlPlaneReady 3\.0 s/,
    );
  });
});
