// learn ID... --demo --live: the demos run against a debug kube-apiserver under delve beside the
// unit on the first control-plane host (trace apply's, trace/host.ts), with a tracepoint at each
// live cite's line at the version the cluster runs. Each live cite is then shown as seen live (its
// hits, where delve stopped and the frame that called it) or not seen.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../lib/log.ts';
import { ensureAll } from '../../core/components/binaries/index.ts';
import { InputError } from '../../lib/errors.ts';
import { citation } from '../drills/index.ts';
import { DEBUG_PORT } from '../delve/beside.ts';
import {
  compiledFile,
  debugBuildBinaryVersions,
  debugBuildReplaces,
  namer,
} from '../delve/modules.ts';
import type { DlvClient } from '../delve/rpc.ts';
import { DEBUG_UNIT, withDebugApiserver } from '../delve/apiserver.ts';
import { continueWhile } from '../delve/continue.ts';
import { forwardLocal } from '../delve/forward.ts';
import { siteAt } from './cites.ts';
import { redirected } from './env.ts';
import { demo, type DemoResult } from './index.ts';
import type { Cite, Exercise, LearnEnv } from './types.ts';

/** Where a live cite's tracepoint goes: the line at the running version, named as the debug build's DWARF names its file. */
export interface LivePoint {
  /** The citation at the running version. */
  ref: string;
  /** `module@version/file`, as delve takes and reports it. */
  file: string;
  line: number;
}

export interface Frame {
  function: string;
  file: string;
  line: number;
}

/** One live cite after the demo: seen (hits > 0) or not, and why no tracepoint could be set. */
export interface LiveCite {
  ref: string;
  why: string;
  seen: boolean;
  hits: number;
  /** The first hit's goroutine and its innermost frames: [0] where delve stopped, [1] its caller. */
  goroutine?: number;
  frames?: Frame[];
  unset?: string;
}

/** The first hit of a point during one exercise, and how many there were. */
interface Seen {
  hits: number;
  goroutine?: number;
  frames?: Frame[];
}

/** How many frames of the first hit's stack are kept. */
const FRAMES = 6;

/** The live cites' tracepoint locations, or why a cite has none at the running version. */
export function livePoint(
  c: Cite,
  running: string,
  name: (module: string, version: string, file: string) => string,
): LivePoint | { unset: string } {
  const site = siteAt(c, running);
  if (!site)
    return {
      unset: `the text is not in ${running}'s source on this machine, so the line is not known there`,
    };
  return {
    ref: citation(site),
    file: name(site.module, site.version, site.file),
    line: site.line,
  };
}

/** The exercises' live cites (2.1's and 3.5a's share one line, and so one tracepoint). */
export const liveCites = (exercises: readonly Exercise[]) =>
  exercises.flatMap((e) => e.cites.filter((c) => c.live));

/** A kubeconfig's text with every cluster's server replaced. */
export function withServer(kubeconfig: string, server: string): string {
  return kubeconfig.replace(/^(\s*server:\s*).*$/gm, `$1${server}`);
}

/** The live cites of one exercise from the tracepoints' hits during it. */
export function liveResult(
  cites: readonly Cite[],
  points: Map<Cite, LivePoint | { unset: string }>,
  seen: Map<string, Seen>,
): LiveCite[] {
  return cites
    .filter((c) => c.live)
    .map((c) => {
      const p = points.get(c);
      if (!p || 'unset' in p)
        return {
          ref: citation(c.site),
          why: c.why,
          seen: false,
          hits: 0,
          unset: p?.unset ?? 'no tracepoint',
        };
      const s = seen.get(`${p.file}:${p.line}`);
      return {
        ref: p.ref,
        why: c.why,
        seen: (s?.hits ?? 0) > 0,
        hits: s?.hits ?? 0,
        ...(s?.goroutine !== undefined ? { goroutine: s.goroutine } : {}),
        ...(s?.frames ? { frames: s.frames } : {}),
      };
    });
}

const at = (f: Frame) => `${f.file}:${f.line}`;

/** One live cite as `learn` prints it. */
export function liveLine(l: LiveCite): string {
  if (l.unset) return `  not seen   ${l.ref}: no tracepoint (${l.unset})`;
  if (!l.seen) return `  not seen   ${l.ref}: the demo did not run it`;
  const [stop, caller] = l.frames ?? [];
  return [
    `  seen live  ${l.ref}: ${l.hits} hit${l.hits === 1 ? '' : 's'}${l.goroutine !== undefined ? `, first in goroutine ${l.goroutine}` : ''}`,
    ...(stop ? [`             delve stopped at ${at(stop)}`] : []),
    ...(caller ? [`             called from ${at(caller)} (${caller.function})`] : []),
  ].join('\n');
}

/** Sets a tracepoint at each point; the ones delve refuses carry its message instead. */
async function setPoints(
  c: DlvClient,
  points: Map<Cite, LivePoint | { unset: string }>,
): Promise<Map<number, string>> {
  const byId = new Map<number, string>();
  const set = new Map<string, number>();
  for (const [cite, p] of points) {
    if ('unset' in p) continue;
    const key = `${p.file}:${p.line}`;
    if (set.has(key)) continue;
    try {
      const bp = await c.trace(p.file, p.line, []);
      set.set(key, bp.id);
      byId.set(bp.id, key);
    } catch (err) {
      points.set(cite, { unset: `delve: ${err instanceof Error ? err.message : String(err)}` });
    }
  }
  return byId;
}

/**
 * Runs each exercise's demo against a debug kube-apiserver under delve, and its check while that
 * instance still runs (the learner's requests are in its audit log); `each` gets the demo's result
 * and its live cites. The instance is removed afterwards, however the demos end.
 */
export async function liveDemos(
  env: LearnEnv,
  exercises: readonly Exercise[],
  log: Logger,
  each: (e: Exercise, r: DemoResult, live: LiveCite[]) => void,
): Promise<void> {
  const version = env.inv.cluster.kubernetesVersion;
  const host = env.inv.controlPlaneHosts[0];
  if (!host)
    throw new InputError('inventory', 'has no control-plane host to run the debug apiserver on');
  const [debug, dlv] = await ensureAll(['kube-apiserver-debug', 'dlv'], {
    kubernetesVersion: version,
    log,
  });
  const name = namer(debugBuildBinaryVersions(version));
  const replaced = debugBuildReplaces(version);
  const points = new Map(liveCites(exercises).map((c) => [c, livePoint(c, version, name)]));
  await env.ctx.wet.run(host.name, 'a debug kube-apiserver under delve for the demo', (s) =>
    withDebugApiserver(
      s,
      { dlv: dlv!.path, debugBinary: debug!.path, readyTimeoutMs: 600_000, step: 'learn --live' },
      log,
      async ({ client, dir, startup }) => {
        const byId = await setPoints(client, points);
        log.info(
          `  the debug kube-apiserver (${DEBUG_UNIT}) was healthy in ${Math.round(startup)}s; ${byId.size} tracepoints: ${[...byId.values()].map((k) => k.replace(/^.*\//, '')).join(', ')}`,
        );
        const fwd = await forwardLocal(s, DEBUG_PORT);
        // A private copy of the admin's kubeconfig (it holds the key) whose server is the forwarded port.
        const tmp = mkdtempSync(join(tmpdir(), 'hardwire-learn-live-'));
        try {
          const kubeconfig = join(tmp, 'kubeconfig');
          writeFileSync(
            kubeconfig,
            withServer(readFileSync(env.kubeconfig, 'utf8'), `https://127.0.0.1:${fwd.port}`),
            { mode: 0o600 },
          );
          const beside = redirected(env, kubeconfig, { host: host.name, file: `${dir}/audit.log` });
          let seen = new Map<string, Seen>();
          await continueWhile(
            client,
            async () => {
              for (const e of exercises) {
                seen = new Map();
                const r = await demo(beside, e);
                each(e, r, liveResult(e.cites, points, seen));
              }
            },
            async (state) => {
              for (const th of state.Threads ?? []) {
                const key = th.breakPoint ? byId.get(th.breakPoint.id) : undefined;
                if (!key) continue;
                const one = seen.get(key) ?? { hits: 0 };
                seen.set(key, one);
                one.hits++;
                if (one.frames) continue;
                const st = await client.stacktrace(th.goroutineID, FRAMES);
                one.goroutine = th.goroutineID;
                // At the compiled versions (a replaced module's, not delve's v0.0.0), without the
                // compiler's wrappers (a method value's -fm is <autogenerated>:1).
                one.frames = (st.result.Locations ?? [])
                  .filter((l) => l.file !== '<autogenerated>')
                  .map((l) => ({
                    function: l.function?.name ?? '',
                    file: compiledFile(l.file, replaced),
                    line: l.line,
                  }));
              }
            },
          );
        } finally {
          rmSync(tmp, { recursive: true, force: true });
          await fwd.close();
        }
      },
    ),
  );
}
