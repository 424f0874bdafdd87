// trace apply on one host: the debug kube-apiserver (delve/apiserver.ts), a breakpoint at each sink
// once it is healthy, so its own start-up writes are not traced, then one kubectl apply through it.
import type { Session } from '../../core/transport/index.ts';
import { StepError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import { withDebugApiserver } from '../delve/apiserver.ts';
import { DEBUG_PORT } from '../delve/beside.ts';
import { forwardLocal } from '../delve/forward.ts';
import { recordHits, type Kubectl } from './record.ts';
import { sinksFor, type Sink } from './sinks.ts';
import type { Hit } from './stages.ts';

export interface HostTraceRun {
  dlv: string;
  debugBinary: string;
  kind: string;
  /** Sinks besides sinksFor's (--webhook-reject's). */
  extraSinks?: Sink[];
  /** Runs kubectl apply against https://127.0.0.1:<port> (the forwarded debug instance). */
  apply: (port: number) => Promise<Kubectl>;
  readyTimeoutMs: number;
}

export interface HostTrace {
  argv: string[];
  sinks: Sink[];
  hits: Hit[];
  kubectl: Kubectl;
  seconds: { startup: number; traced: number };
}

export async function traceOnHost(s: Session, run: HostTraceRun, log: Logger): Promise<HostTrace> {
  return withDebugApiserver(s, { ...run, step: 'trace apply' }, log, async (d) => {
    const { client, argv, startup } = d;
    const sinks = [...(await sinksFor(client, run.kind)), ...(run.extraSinks ?? [])];
    const byId = new Map<number, Sink>();
    for (const sink of sinks) {
      const bp = await client.breakAtFunction(sink.function).catch((err: unknown) => {
        throw new StepError(
          'trace apply',
          `no breakpoint at ${sink.function}: ${err instanceof Error ? err.message : String(err)}`,
          { host: s.host.name },
        );
      });
      byId.set(bp.id, sink);
    }
    log.info(
      `  ${sinks.length} breakpoints: ${sinks.map((x) => x.function.replace(/^.*\//, '')).join(', ')}; kubectl apply`,
    );
    const fwd = await forwardLocal(s, DEBUG_PORT);
    const tracing = Date.now();
    try {
      const { hits, kubectl } = await recordHits(client, byId, () => run.apply(fwd.port));
      return {
        argv,
        sinks,
        hits,
        kubectl,
        seconds: { startup, traced: (Date.now() - tracing) / 1000 },
      };
    } finally {
      await fwd.close();
    }
  });
}
