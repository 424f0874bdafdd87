// The debug kube-apiserver under delve on one host, beside the unit's (beside.ts). The unit is never
// stopped. Breakpoints go in once it is healthy, so its own start-up writes are not traced.
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Session } from '../../core/transport/index.ts';
import { StepError } from '../../lib/errors.ts';
import { UNIT_DIR } from '../../lib/constants.ts';
import type { Logger } from '../../lib/log.ts';
import { execStartArgv } from '../planes/normalize.ts';
import { localHealthz } from '../../core/gates/local.ts';
import { connectDlv, unitProperties } from '../delve/connect.ts';
import type { DlvClient } from '../delve/rpc.ts';
import { forwardLocal } from './forward.ts';
import { continueWhile, recordHits, type Kubectl } from './record.ts';
import { sinksFor, type Sink } from './sinks.ts';
import type { Hit } from './stages.ts';
import { besideArgv, DEBUG_PORT } from '../delve/beside.ts';
import { unitOf } from '../../lib/unit.ts';

const DEBUG_UNIT = 'hardwire-trace-kube-apiserver';

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

async function sh(s: Session, argv: string[], what: string): Promise<string> {
  const r = await s.exec(argv, { allowFail: true });
  if (r.code !== 0)
    throw new StepError('trace apply', `${what}: ${r.stderr.trim() || r.stdout.trim()}`, {
      host: s.host.name,
    });
  return r.stdout.trim();
}

/** Runs the debuggee until its /healthz answers ok, then halts it (a stop on the way is continued). */
async function runUntilHealthy(s: Session, c: DlvClient, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let stops = 0;
  await continueWhile(
    c,
    async (alive) => {
      while (alive()) {
        const h = await localHealthz(s, DEBUG_PORT).catch(() => ({ status: 0, body: '' }));
        if (h.status === 200 && h.body === 'ok') return;
        if (Date.now() > deadline)
          throw new StepError(
            'trace apply',
            `the debug kube-apiserver was not healthy on ${DEBUG_PORT} within ${timeoutMs / 1000}s (${stops} stops on the way; journalctl -u ${DEBUG_UNIT} on the host)`,
            { host: s.host.name },
          );
        await sleep(2000);
      }
    },
    async () => {
      stops++;
    },
  );
}

export async function traceOnHost(s: Session, run: HostTraceRun, log: Logger): Promise<HostTrace> {
  const unit = 'kube-apiserver.service';
  const unitText = (await s.readFile(`${UNIT_DIR}/${unit}`)).toString('utf8');
  const unitArgv = execStartArgv(unitText);
  if (unitArgv.length === 0)
    throw new StepError('trace apply', `${UNIT_DIR}/${unit} has no ExecStart`, {
      host: s.host.name,
    });
  const dir = await sh(s, ['mktemp', '-d', '/var/tmp/hardwire-trace.XXXXXX'], 'mktemp');
  const argv = besideArgv(unitArgv, dir);
  const { props } = unitProperties(unitText, unit, DEBUG_UNIT);
  let client: DlvClient | undefined;
  const started = Date.now();
  try {
    log.info(`  copying dlv and the debug kube-apiserver to ${s.host.name}:${dir}`);
    await s.writeFileAtomic(`${dir}/dlv`, await readFile(run.dlv), {
      mode: 0o755,
      owner: 'root:root',
    });
    await s.writeFileAtomic(`${dir}/kube-apiserver`, await readFile(run.debugBinary), {
      mode: 0o755,
      owner: 'root:root',
    });
    await sh(s, ['install', '-d', '-m', '0700', `${dir}/debugger`], "delve's directory");
    const socket = `${dir}/debugger/dlv.sock`;
    // tracebackancestors: each goroutine keeps the id of the one that started it, so a stop in the
    // finisher goroutine leads back to the filters' goroutines (delve's Ancestors).
    await sh(
      s,
      [
        'systemd-run',
        `--unit=${DEBUG_UNIT}`,
        '--collect',
        '--quiet',
        ...props,
        `--setenv=XDG_CONFIG_HOME=${dir}/debugger`,
        '--setenv=GODEBUG=tracebackancestors=10',
        '--',
        `${dir}/dlv`,
        'exec',
        '--headless',
        `--listen=unix:${socket}`,
        '--api-version=2',
        '--check-go-version=false',
        argv[0]!,
        '--',
        ...argv.slice(1),
      ],
      'start delve',
    );
    client = await connectDlv(s, socket, Date.now() + 180_000, 'trace apply');
    log.info(
      `  the debug kube-apiserver runs under delve on port ${DEBUG_PORT}; waiting for its /healthz`,
    );
    await runUntilHealthy(s, client, run.readyTimeoutMs).catch(async (err: unknown) => {
      const j = await s.exec(
        ['journalctl', '-u', unitOf(DEBUG_UNIT), '-n', '15', '--no-pager', '-o', 'cat'],
        { allowFail: true },
      );
      throw new StepError('trace apply', err instanceof Error ? err.message : String(err), {
        host: s.host.name,
        detail: j.stdout.trimEnd().split('\n'),
      });
    });
    const startup = (Date.now() - started) / 1000;
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
  } finally {
    await client?.detachKill();
    client?.close();
    await s.exec(['systemctl', 'stop', unitOf(DEBUG_UNIT)], { allowFail: true });
    await s.exec(['rm', '-rf', '--', dir], { allowFail: true });
  }
}
