// Time to first Pod (issue 23): one watcher per plane, started when the plane's hosts are up and
// nothing is installed, polling the same four questions on every plane while its installer runs:
//   certs              the apiserver's serving certificate is on the control-plane host
//                      (kubeadm and k0s generate it there; hardwire generates it locally and pushes it,
//                      so this is when hardwire's control plane could first use it);
//   controlPlaneReady  the apiserver answers GET /readyz with "ok";
//   nodeReady          the worker's Node has condition Ready=True;
//   podRunning         the busybox Pod is phase Running with spec.nodeName = that worker.
// Every boundary is performance.now() of this process (one monotonic clock per plane), taken when the
// poll that first sees the condition returns, minus the same t0: so the phases of the three planes are
// measured by the same code with the same resolution (the poll interval plus one round trip), never
// from a host's clock or a tool's own log.
import { setTimeout as sleep } from 'node:timers/promises';

export const TTFP_PHASES = ['certs', 'controlPlaneReady', 'nodeReady', 'podRunning'] as const;
export type TtfpPhase = (typeof TTFP_PHASES)[number];
export type TtfpChecks = Record<TtfpPhase, () => Promise<boolean>>;

export interface TtfpWatch {
  /** The worker the Pod must run on, and the Pod (namespace/name). */
  worker: string;
  pod: string;
  /** False when the first phase already held at t0: the plane was not bare, so no time is measured. */
  bare: boolean;
  /** ms from t0 (hosts up, nothing installed) to each boundary, for the phases seen. */
  at: Partial<Record<TtfpPhase, number>>;
  pollMs: number;
}

export interface Watcher {
  finish(timeoutMs?: number): Promise<TtfpWatch>;
}

/** Starts polling now (t0); the checks are asked in phase order, each until it holds. */
export function watchTtfp(
  checks: TtfpChecks,
  target: { worker: string; pod: string },
  pollMs = 500,
): Watcher {
  const t0 = performance.now();
  const at: TtfpWatch['at'] = {};
  let bare = true;
  let stopped = false;
  const loop = (async () => {
    let i = 0;
    let first = true;
    while (!stopped && i < TTFP_PHASES.length) {
      const phase = TTFP_PHASES[i]!;
      const ok = await checks[phase]().catch(() => false);
      if (ok) {
        if (first) bare = false;
        at[phase] = Math.round(performance.now() - t0);
        i++;
        continue;
      }
      first = false;
      await sleep(pollMs);
    }
  })();
  return {
    async finish(timeoutMs = 30_000) {
      // The installer saw the Pod Running; the watcher sees it within one poll.
      await Promise.race([loop, sleep(timeoutMs)]);
      stopped = true;
      await loop;
      return { ...target, bare, at: { ...at }, pollMs };
    },
  };
}
