// The debug kube-apiserver under delve on one host, beside the unit's (beside.ts), started and
// removed around a body that gets it healthy and halted. The unit is never stopped. trace apply
// and learn --live both run it so.
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Session } from '../../core/transport/index.ts';
import { StepError } from '../../lib/errors.ts';
import { UNIT_DIR } from '../../lib/constants.ts';
import type { Logger } from '../../lib/log.ts';
import { execStartArgv } from '../planes/normalize.ts';
import { localHealthz } from '../../core/gates/local.ts';
import { unitOf } from '../../lib/unit.ts';
import { connectDlv, delveUnitArgv, unitProperties } from './connect.ts';
import { continueWhile } from './continue.ts';
import type { DlvClient } from './rpc.ts';
import { besideArgv, DEBUG_PORT } from './beside.ts';

/** The debug instance's transient unit. */
export const DEBUG_UNIT = 'hardwire-trace-kube-apiserver';

async function sh(s: Session, argv: string[], what: string, step: string): Promise<string> {
  const r = await s.exec(argv, { allowFail: true });
  if (r.code !== 0)
    throw new StepError(step, `${what}: ${r.stderr.trim() || r.stdout.trim()}`, {
      host: s.host.name,
    });
  return r.stdout.trim();
}

/** Runs the debuggee until its /healthz answers ok, then halts it (a stop on the way is continued). */
async function runUntilHealthy(
  s: Session,
  c: DlvClient,
  timeoutMs: number,
  step: string,
): Promise<void> {
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
            step,
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

export interface DebugApiserverRun {
  dlv: string;
  debugBinary: string;
  readyTimeoutMs: number;
  /** The command its errors name: trace apply, learn. */
  step: string;
}

/** A healthy debug kube-apiserver, halted under delve, on DEBUG_PORT of the host. */
export interface DebugApiserver {
  client: DlvClient;
  argv: string[];
  /** Its scratch directory on the host (its audit log is audit.log there, when the unit writes one). */
  dir: string;
  /** Seconds from the copy to /healthz ok. */
  startup: number;
}

/**
 * Starts the debug kube-apiserver under delve beside the unit, runs `body` once it is healthy, and
 * removes it (the debuggee killed, the transient unit stopped, its directory removed) however
 * `body` ends.
 */
export async function withDebugApiserver<T>(
  s: Session,
  run: DebugApiserverRun,
  log: Logger,
  body: (d: DebugApiserver) => Promise<T>,
): Promise<T> {
  const { step } = run;
  const unit = 'kube-apiserver.service';
  const unitText = (await s.readFile(`${UNIT_DIR}/${unit}`)).toString('utf8');
  const unitArgv = execStartArgv(unitText);
  if (unitArgv.length === 0)
    throw new StepError(step, `${UNIT_DIR}/${unit} has no ExecStart`, {
      host: s.host.name,
    });
  const dir = await sh(s, ['mktemp', '-d', '/var/tmp/hardwire-trace.XXXXXX'], 'mktemp', step);
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
    await sh(s, ['install', '-d', '-m', '0700', `${dir}/debugger`], "delve's directory", step);
    const socket = `${dir}/debugger/dlv.sock`;
    // tracebackancestors: each goroutine keeps the id of the one that started it, so a stop in the
    // finisher goroutine leads back to the filters' goroutines (delve's Ancestors).
    await sh(
      s,
      delveUnitArgv({
        unit: DEBUG_UNIT,
        props,
        configDir: `${dir}/debugger`,
        env: ['GODEBUG=tracebackancestors=10'],
        dlv: `${dir}/dlv`,
        socket,
        argv,
      }),
      'start delve',
      step,
    );
    client = await connectDlv(s, socket, Date.now() + 180_000, step);
    log.info(
      `  the debug kube-apiserver runs under delve on port ${DEBUG_PORT}; waiting for its /healthz`,
    );
    const c = client;
    await runUntilHealthy(s, c, run.readyTimeoutMs, step).catch(async (err: unknown) => {
      const j = await s.exec(
        ['journalctl', '-u', unitOf(DEBUG_UNIT), '-n', '15', '--no-pager', '-o', 'cat'],
        { allowFail: true },
      );
      throw new StepError(step, err instanceof Error ? err.message : String(err), {
        host: s.host.name,
        detail: j.stdout.trimEnd().split('\n'),
      });
    });
    return await body({ client: c, argv, dir, startup: (Date.now() - started) / 1000 });
  } finally {
    await client?.detachKill();
    client?.close();
    await s.exec(['systemctl', 'stop', unitOf(DEBUG_UNIT)], { allowFail: true });
    await s.exec(['rm', '-rf', '--', dir], { allowFail: true });
  }
}
