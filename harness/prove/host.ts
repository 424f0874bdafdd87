// One component on one host under delve: the unit's own ExecStart flags, the debug build in place
// of the release binary, the unit stopped meanwhile and started again afterwards whatever happens;
// or (kube-apiserver) beside the running unit, with the few flags that must differ changed.
import { readFile } from 'node:fs/promises';
import type { Session } from '../../core/transport/index.ts';
import { StepError } from '../../lib/errors.ts';
import { UNIT_DIR } from '../../lib/constants.ts';
import type { Logger } from '../../lib/log.ts';
import { execStartArgv } from '../planes/normalize.ts';
import type { DlvClient } from '../delve/rpc.ts';
import { connectDlv, delveUnitArgv, unitProperties } from '../delve/connect.ts';
import { setTracepoints, traceUntil, type TraceOutcome } from './trace.ts';
import type { GuardProbe } from './guards.ts';
import type { TraceSite } from './sites.ts';
import type { ProveGate } from './gates.ts';
import { unitOf } from '../../lib/unit.ts';

/**
 * delve listens on a unix socket in a 0700 directory of the unit's account, reached through the SSH
 * connection (direct-streamlocal), so only that account and root can reach it. Not on a loopback TCP
 * port: delve accepts a loopback connection only from its own uid (--only-same-user, on by default,
 * which it reads from /proc/net/tcp), and the tunnel's end is sshd as root, so a delve running as etcd
 * closed every connection and etcd was left stopped at exec, never continued.
 */
const DLV_DIR = 'debugger';

export interface HostRun {
  component: string;
  /** Run to this gate: healthy, and (where it has one) the Lease taken by this instance. */
  gate: ProveGate;
  dlv: string;
  debugBinary: string;
  gateTimeoutMs: number;
  /**
   * Run beside the unit, which keeps running: the debuggee's argv from the unit's and the scratch
   * dir (kube-apiserver: its own port, audit log and reconciler, harness/delve/beside.ts).
   */
  beside?: (unitArgv: string[], dir: string) => string[];
  /**
   * Past the gate, send the debuggee SIGTERM and keep tracing until it exits: the reads of its
   * shutdown (kube-apiserver's watch drain and pre-shutdown hooks) count too.
   */
  stopAfterGate?: boolean;
  /** The caller stopped the unit and starts it again (etcd's first boot: only once its data dir is back). */
  unitStopped?: boolean;
  /**
   * Another tool's flags in place of the unit's (`flags prove --flags-of kubeadm`): the argv to
   * start from, from the session and the unit's text (its credentials); `beside` still applies.
   */
  flags?: (s: Session, unitText: string) => Promise<string[]>;
}

/** `unitArgv`: what the run started from, the unit's argv (or the other tool's, translated) before `beside` changed it. */
export interface HostOutcome extends TraceOutcome {
  argv: string[];
  unitArgv: string[];
  holder: string;
}

async function sh(s: Session, argv: string[], what: string): Promise<string> {
  const r = await s.exec(argv, { allowFail: true });
  if (r.code !== 0)
    throw new StepError('flags prove', `${what}: ${r.stderr.trim() || r.stdout.trim()}`, {
      host: s.host.name,
    });
  return r.stdout.trim();
}

export async function proveOnHost(
  s: Session,
  run: HostRun,
  sites: (argv: string[]) => { sites: TraceSite[]; guards: GuardProbe[] },
  log: Logger,
): Promise<HostOutcome> {
  const unit = unitOf(run.component);
  const unitText = (await s.readFile(`${UNIT_DIR}/${unit}`)).toString('utf8');
  const ownArgv = execStartArgv(unitText);
  if (ownArgv.length === 0)
    throw new StepError('flags prove', `${UNIT_DIR}/${unit} has no ExecStart`, {
      host: s.host.name,
    });
  const unitArgv = run.flags ? await run.flags(s, unitText) : ownArgv;
  const dir = await sh(s, ['mktemp', '-d', '/var/tmp/hardwire-prove.XXXXXX'], 'mktemp');
  const argv = run.beside ? run.beside(unitArgv, dir) : unitArgv;
  const debugUnit = `hardwire-prove-${run.component}`;
  const { user, props } = unitProperties(unitText, unit, debugUnit);
  const wait = await run.gate(s, run.gateTimeoutMs, argv);
  let client: DlvClient | undefined;
  try {
    log.info(`  copying dlv and the debug ${run.component} to ${s.host.name}:${dir}`);
    await s.writeFileAtomic(`${dir}/dlv`, await readFile(run.dlv), {
      mode: 0o755,
      owner: 'root:root',
    });
    await s.writeFileAtomic(`${dir}/${run.component}`, await readFile(run.debugBinary), {
      mode: 0o755,
      owner: 'root:root',
    });
    await sh(s, ['chmod', '0755', dir], 'chmod'); // mktemp -d is 0700: the unit's user runs from it
    // delve's own directory (its socket, and its config under $XDG_CONFIG_HOME), the account's alone.
    await sh(
      s,
      ['install', '-d', '-m', '0700', '-o', user ?? 'root', `${dir}/${DLV_DIR}`],
      "delve's directory",
    );
    if (!run.beside && !run.unitStopped) await sh(s, ['systemctl', 'stop', unit], `stop ${unit}`);
    // A transient unit: its lifetime does not hang on this SSH connection, and stop cleans it up.
    // delve keeps its config under $XDG_CONFIG_HOME: in the scratch dir, not in the account's home
    // (etcd's is its data dir).
    const socket = `${dir}/${DLV_DIR}/dlv.sock`;
    await sh(
      s,
      delveUnitArgv({
        unit: debugUnit,
        props,
        configDir: `${dir}/${DLV_DIR}`,
        dlv: `${dir}/dlv`,
        socket,
        argv: [`${dir}/${run.component}`, ...argv.slice(1)],
      }),
      'start delve',
    );
    client = await connectDlv(s, socket, Date.now() + 180_000); // kube-apiserver's DWARF takes longest to load
    const plan = sites(argv);
    const traced = await setTracepoints(client, plan.sites, plan.guards);
    log.info(
      `  ${traced.byId.size} tracepoints for ${traced.traces.length} cited sites and ${traced.guards.size} guards; continuing ${run.component} until it passes its gate`,
    );
    let holder = '';
    const stop = run.stopAfterGate
      ? async (pid: number) => {
          log.info(
            `  gate passed; sending SIGTERM to ${run.component} (pid ${pid}) and tracing until it exits`,
          );
          await sh(s, ['kill', '-TERM', String(pid)], 'SIGTERM to the debuggee');
        }
      : undefined;
    const journal = async () =>
      (
        await s.exec(
          ['journalctl', '-u', unitOf(debugUnit), '-n', '15', '--no-pager', '-o', 'cat'],
          { allowFail: true },
        )
      ).stdout.trimEnd();
    const out = await traceUntil(
      client,
      traced,
      async (signal) => {
        holder = await wait(signal);
      },
      stop,
    ).catch(async (err: unknown) => {
      // A gate that never passed: what the debuggee said is the real error.
      if (err instanceof StepError) err.detail.push(...(await journal()).split('\n'));
      throw err;
    });
    if (out.exited !== undefined)
      log.warn(
        `  ${run.component} exited with ${out.exited} under delve; its last lines:\n${await journal()}`,
      );
    return { ...out, argv, unitArgv, holder };
  } finally {
    await client?.detachKill();
    client?.close();
    await s.exec(['systemctl', 'stop', unitOf(debugUnit)], { allowFail: true });
    await s.exec(['rm', '-rf', '--', dir], { allowFail: true });
    if (!run.beside && !run.unitStopped) {
      // A failed start is not the end: systemd restarts it (Restart=), and untilActive says why if not.
      // CI at dc179ab: etcd's first start after the proof exited 1 on a loaded machine.
      await s.exec(['systemctl', 'start', unit], { allowFail: true });
      await untilActive(s, unit, log);
    }
  }
}

/**
 * The unit back to active before prove returns. A unit that exits right after its start (seen once in
 * CI: kube-controller-manager "activating" after the kubeadm-flags proof, on a loaded machine) is
 * restarted by systemd (Restart=on-failure); its last lines are logged so that the exit is not hidden.
 */
async function untilActive(s: Session, unit: string, log: Logger): Promise<void> {
  const deadline = Date.now() + 60_000;
  let said = false;
  for (;;) {
    const state = (
      await s.exec(['systemctl', 'is-active', unit], { allowFail: true })
    ).stdout.trim();
    if (state === 'active') return;
    if (!said) {
      said = true;
      const tail = await s.exec(['journalctl', '-u', unit, '-n', '8', '--no-pager', '-o', 'cat'], {
        allowFail: true,
      });
      log.warn(
        `  ${unit} is ${state} after its start again; its last lines:\n${tail.stdout.trimEnd()}`,
      );
    }
    if (Date.now() > deadline)
      throw new StepError(
        'flags prove',
        `${unit} is ${state}, not active, 60 s after its start again`,
        {
          host: s.host.name,
        },
      );
    await new Promise((r) => setTimeout(r, 1000));
  }
}
