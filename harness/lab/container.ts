// Powering one lab host on and off: a detached systemd-nspawn over the shared base rootfs, wired to the
// lab bridge through a veth whose names we choose, so nothing has to be found by name afterwards.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { StepError } from '../../lib/errors.ts';
import { run, spawnDetached } from '../../lib/proc.ts';
import { isSameProcess, procStartTime } from '../../lib/pid.ts';
import { findContainerInit, linkExists, signal } from './sys.ts';
import { waitFor } from '../../lib/retry.ts';
import type { LabHostState, LabState } from './state.ts';
import { ensureLabRangeUnreachable } from './route.ts';
import {
  beforeUp,
  bridgeOf,
  configureInner,
  ensureInnerBridge,
  innerNspawnArgs,
  vethsOf,
} from './inner.ts';
import { ensureNodeCgroups, joinCgroupsThenExec, workerNspawnArgs } from './worker.ts';

export { linkExists };

export function consoleLog(host: LabHostState): string {
  return join(dirname(host.upper), 'console.log');
}

export function isRunning(host: LabHostState): boolean {
  return isSameProcess(host.pid, host.startTime);
}

/** The lab bridge with the host-side address, and the inner bridge without one; no forwarding or NAT, so traffic stays on lab addresses. */
export async function ensureBridge(state: LabState): Promise<void> {
  const step = { step: 'lab-network' };
  // First the lab range's unreachable route, so no lab address ever has a path off this machine.
  await ensureLabRangeUnreachable();
  if (!(await linkExists(state.bridge)))
    await run('ip', ['link', 'add', 'name', state.bridge, 'type', 'bridge'], step);
  await run(
    'ip',
    ['addr', 'replace', `${state.bridgeAddress}/${state.prefix}`, 'dev', state.bridge],
    step,
  );
  await run('ip', ['link', 'set', 'dev', state.bridge, 'up'], step);
  await ensureInnerBridge(state);
}

function readConsole(host: LabHostState): string | undefined {
  try {
    return readFileSync(consoleLog(host), 'utf8');
  } catch {
    return undefined;
  }
}

function consoleTail(host: LabHostState): string[] {
  return readConsole(host)?.trimEnd().split('\n').slice(-10) ?? [];
}

/** Units the host's console reported as failed, for errors when a host never becomes reachable. */
export function consoleFailures(host: LabHostState): string[] {
  // eslint-disable-next-line no-control-regex
  const text = (readConsole(host) ?? '').replace(/\x1b\[[0-9;]*m/g, '');
  return text
    .split('\n')
    .filter((l) => l.includes('FAILED'))
    .map((l) => l.trim());
}

/**
 * Boots the host and configures host0. Mutates `host` (pids) and calls `record` as soon as the PID is known.
 * `as` overrides the lab's rootfs and worker setting: an arm64 host has its own rootfs and is no worker here.
 */
export async function bootHost(
  state: LabState,
  host: LabHostState,
  record: () => void,
  as: { rootfs?: string; worker?: boolean } = {},
): Promise<void> {
  const rootfs = as.rootfs ?? state.rootfs;
  const worker = as.worker ?? state.workers === true;
  const args = [
    '--quiet',
    `--directory=${rootfs}`,
    // Copy-on-write root: the shared rootfs below, this host's upper dir on top.
    `--overlay=${rootfs}:${host.upper}:/`,
    `--machine=${host.machine}`,
    '--boot',
    // The build machine runs no systemd: do not register with machined or ask for a scope unit.
    '--register=no',
    '--keep-unit',
    `--network-veth-extra=${host.veth}:host0`,
    ...innerNspawnArgs(host),
    '--resolv-conf=off',
    '--timezone=off',
    '--link-journal=no',
    '--console=read-only',
    ...(worker ? workerNspawnArgs(host) : []),
  ];
  // A veth of a container that was just killed may linger a moment; nspawn cannot reuse the name until it goes.
  for (const veth of vethsOf(host)) {
    if (!(await waitFor(async () => !(await linkExists(veth)), 5000))) {
      await run('ip', ['link', 'delete', 'dev', veth], { step: 'lab-network', host: host.name });
    }
  }
  // nspawn makes its overlay work dir ".#upper<random>" beside the upper dir; one left by a killed nspawn is stale.
  const hostDir = dirname(host.upper);
  for (const f of readdirSync(hostDir))
    if (f.startsWith('.#upper')) rmSync(join(hostDir, f), { recursive: true, force: true });
  // A worker boots inside its own cgroups: a shell joins them and execs nspawn (lab/worker.ts).
  const cmd = worker
    ? joinCgroupsThenExec(ensureNodeCgroups(host), args)
    : { file: 'systemd-nspawn', args };
  // detached: setsid, so the host outlives the command that started it.
  const spawned = await spawnDetached(cmd.file, cmd.args, {
    step: 'lab-boot',
    host: host.name,
    output: consoleLog(host),
    hint: 'install it with: apt-get install -y systemd-container',
  });
  host.pid = spawned;
  host.startTime = procStartTime(spawned) ?? null;
  host.initPid = null;
  host.initStartTime = null;
  record();

  let init: number | undefined;
  const up = await waitFor(async () => {
    if (!isRunning(host)) return true; // exited: fail below with its console output
    init ??= findContainerInit(spawned);
    if (init === undefined) return false;
    for (const veth of vethsOf(host)) if (!(await linkExists(veth))) return false;
    return true;
  }, 15_000);
  if (!isRunning(host) || !up || init === undefined) {
    const why = isRunning(host)
      ? 'did not start its init and veth within 15 s'
      : 'exited during start';
    if (isRunning(host)) await stopHost(host);
    host.pid = null;
    host.startTime = null;
    record();
    throw new StepError('lab-boot', `systemd-nspawn ${why} (console: ${consoleLog(host)})`, {
      host: host.name,
      detail: consoleTail(host),
    });
  }
  host.initPid = init;
  host.initStartTime = procStartTime(init) ?? null;
  record();

  const step = { step: 'lab-network', host: host.name };
  beforeUp(host);
  await run('ip', ['link', 'set', 'dev', host.veth, 'master', bridgeOf(state, host)], step);
  await run('ip', ['link', 'set', 'dev', host.veth, host.cut ? 'down' : 'up'], step);
  // Address host0 from inside the container's network namespace. No default route: only lab addresses are reachable.
  const inNs = (args: string[]) =>
    run('nsenter', [`--target=${init}`, '--net', '--', 'ip', ...args], step);
  await inNs(['addr', 'replace', `${host.address}/${state.prefix}`, 'dev', 'host0']);
  await inNs(['link', 'set', 'dev', 'host0', 'up']);
  await configureInner(state, host, init, inNs);
}

/** Powers the host off: orderly shutdown (nspawn turns SIGTERM into SIGRTMIN+3 for systemd), then force. */
export async function stopHost(host: LabHostState, graceMs = 20_000): Promise<void> {
  if (isRunning(host)) {
    signal(host.pid!, 'SIGTERM');
    if (!(await waitFor(() => !isRunning(host), graceMs))) {
      // Killing PID 1 of a PID namespace takes down the whole container; then nspawn exits too.
      if (isSameProcess(host.initPid, host.initStartTime)) signal(host.initPid!, 'SIGKILL');
      signal(host.pid!, 'SIGKILL');
      await waitFor(() => !isRunning(host), 5000);
    }
  } else if (isSameProcess(host.initPid, host.initStartTime)) {
    // nspawn died but its container lives on, reparented: stop it by its recorded PID.
    signal(host.initPid!, 'SIGKILL');
    await waitFor(() => !isSameProcess(host.initPid, host.initStartTime), 5000);
  }
  host.pid = null;
  host.startTime = null;
  host.initPid = null;
  host.initStartTime = null;
}
