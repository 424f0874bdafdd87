// The lab's programmatic API: `hardwire lab ...` and other capabilities' tests call these.
import { accessSync, constants, existsSync, mkdirSync, rmSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { LAB_HOST_BYTES, checkLabDisk } from './disk.ts';
import { InputError, StepError } from '../../lib/errors.ts';
import { stderrLogger, type Logger } from '../../lib/log.ts';
import type { Session } from '../../core/transport/session.ts';
import { bootHost, ensureBridge, isRunning, linkExists, stopHost } from './container.ts';
import { withLock } from '../../lib/lock.ts';
import {
  collidingRoutes,
  DEFAULT_HOSTS,
  DEFAULT_LAB_NAME,
  labDir,
  labPlan,
  validateDedicatedWorkers,
  validateHostCount,
  validateInnerCount,
  validateLabName,
} from './plan.ts';
import { removeInner } from './inner.ts';
import {
  startVmHost,
  removeVmDisk,
  stopVm,
  validateVmWorkers,
  vmPlan,
  vmRunning,
  waitVm,
} from './vm-host.ts';
import { prepareWorkerUpper, removeNodeCgroups } from './worker.ts';
import { stopArm64Host, upArm64Hosts, validateArm64Workers } from './arm64-host.ts';
import { ensureLabKey, prepareUpper, writeKnownHosts, writeLabInventory } from './prepare.ts';
import { ARM64_PACKAGES, ensureBaseRootfs, rootfsDir } from './rootfs.ts';
import { labConnectHost, sshAnswers, waitReady } from './ready.ts';
import { ensureLabRangeUnreachable } from './route.ts';
import {
  labFiles,
  readState,
  writeState,
  type LabFiles,
  type LabHostState,
  type LabState,
} from './state.ts';
import { run } from '../../lib/proc.ts';

export interface LabOptions {
  /** Lab name (DNS label). Default "lab". */
  name?: string;
  /** State root; the lab lives in <stateDir>/lab/<name>/. Default: defaultStateDir(). */
  stateDir?: string;
  /** Progress goes here (stderr). Default: warnings only. */
  log?: Logger;
}

export interface LabUpOptions extends LabOptions {
  /** Host count; defaults to the existing lab's count, else 3. */
  hosts?: number;
  /** How many of the last hosts sit on the inner network behind node1 (lab/inner.ts); defaults to the existing lab's, else 0. */
  inner?: number;
  /** Hosts that can run containerd, runc and a kubelet (lab/worker.ts); defaults to the existing lab's, else false. */
  workers?: boolean;
  /** How many of the last hosts are workers only (plan.ts validateDedicatedWorkers); defaults to the existing lab's, else 0. */
  dedicatedWorkers?: number;
  /** QEMU VM workers after the containers (lab/vm-host.ts); defaults to the existing lab's, else 0. */
  vmWorkers?: number;
  /** arm64 containers under qemu-user after the VMs, for reading and planning only (lab/arm64-host.ts); defaults to the existing lab's, else 0. */
  arm64Workers?: number;
}

export interface LabHostInfo {
  name: string;
  address: string;
  running: boolean;
  ssh: boolean;
  /** Network cut by labCut. */
  cut: boolean;
  /** Inner hosts: the bastion's address, the jump host this machine reaches them through. */
  jump?: string;
  /** A VM host: how QEMU runs it (kvm or tcg). */
  vm?: 'kvm' | 'tcg';
  /** An arm64 host (its userland under qemu-user). */
  arch?: 'arm64';
}

export interface LabInfo {
  name: string;
  dir: string;
  /** Absolute path of the hardwire/v1 inventory for this lab. */
  inventory: string;
  knownHosts: string;
  identityFile: string;
  hosts: LabHostInfo[];
}

const LOCK_WAIT_MS = 10 * 60_000;

function resolveOpts(opts: LabOptions) {
  const name = opts.name ?? DEFAULT_LAB_NAME;
  validateLabName(name);
  const dir = resolve(labDir(name, opts.stateDir));
  return { name, dir, files: labFiles(dir), log: opts.log ?? stderrLogger(true) };
}

function onPath(cmd: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((d) => {
    try {
      accessSync(join(d, cmd), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Root and the host tools; the message says exactly what to install. */
export function checkLabPrereqs(needDebootstrap: boolean, needQemuUser = false): void {
  if (process.getuid?.() !== 0)
    throw new StepError(
      'lab-prereq',
      'the lab needs root (it creates containers, a bridge and veths); run as root',
    );
  const missing = [
    ['systemd-nspawn', 'systemd-container'],
    ['ip', 'iproute2'],
    ['nsenter', 'util-linux'],
    ...(needDebootstrap ? [['debootstrap', 'debootstrap']] : []),
    ...(needQemuUser
      ? [
          ['qemu-aarch64-static', 'qemu-user-static'],
          ['update-binfmts', 'binfmt-support'],
        ]
      : []),
  ].filter(([cmd]) => !onPath(cmd!));
  if (missing.length > 0) {
    throw new StepError(
      'lab-prereq',
      `missing ${missing.map(([c]) => c).join(', ')}; install with: apt-get install -y ${[...new Set(missing.map(([, p]) => p))].join(' ')}`,
    );
  }
}

function info(files: LabFiles, state: LabState, hosts: LabHostInfo[]): LabInfo {
  return {
    name: state.name,
    dir: files.dir,
    inventory: files.inventory,
    knownHosts: files.knownHosts,
    identityFile: files.key,
    hosts,
  };
}

function newState(
  name: string,
  count: number,
  inner: number,
  dir: string,
  stateDir: string | undefined,
  rootfs: string,
): LabState {
  const plan = labPlan(name, count, stateDir, inner);
  return {
    version: 1,
    name,
    subnet: plan.subnet.text,
    bridge: plan.bridge,
    bridgeAddress: plan.bridgeAddress,
    prefix: plan.prefix,
    rootfs,
    hosts: plan.hosts.map((h) => ({
      name: h.name,
      address: h.address,
      machine: h.machine,
      veth: h.veth,
      upper: join(dir, 'hosts', h.name, 'upper'),
      pid: null,
      startTime: null,
      initPid: null,
      initStartTime: null,
      cut: false,
      ...(h.jump ? { jump: h.jump } : {}),
      ...(h.innerLink ? { innerLink: h.innerLink } : {}),
    })),
    ...(plan.inner ? { inner: plan.inner } : {}),
  };
}

/** Per-host info as `up` reports it. */
function upInfo(h: LabHostState): LabHostInfo {
  return {
    name: h.name,
    address: h.address,
    running: true,
    ssh: true,
    cut: false,
    ...(h.jump ? { jump: h.jump } : {}),
  };
}

async function checkRoutes(
  name: string,
  count: number,
  inner: number,
  stateDir: string | undefined,
): Promise<void> {
  const plan = labPlan(name, count, stateDir, inner);
  const routes = JSON.parse(
    (await run('ip', ['-j', '-4', 'route', 'show', 'table', 'all'], { step: 'lab-network' }))
      .stdout || '[]',
  ) as { dst?: string; dev?: string }[];
  for (const br of [plan.bridge, ...(plan.inner ? [plan.inner.bridge] : [])]) {
    if (!(await linkExists(br))) continue;
    // Same name, but this state dir never made it: another HARDWIRE_STATE's lab, or one whose state was deleted.
    throw new StepError(
      'lab-network',
      `bridge ${br} of a lab named "${name}" already exists but ${labDir(name, stateDir)} has no record of it; run "hardwire lab down --name ${name}" with the HARDWIRE_STATE that created it, or pick another --name`,
    );
  }
  const clash = collidingRoutes(routes, plan);
  if (clash.length > 0) {
    const nets = [
      plan.subnet.text,
      ...(plan.inner ? [`inner network ${plan.inner.subnet}`] : []),
    ].join(' and ');
    throw new StepError(
      'lab-network',
      `lab "${name}" would use ${nets}, which collides with existing route ${clash.join('; ')}; pick another --name`,
    );
  }
}

/**
 * Creates or repairs the lab and waits until every host runs systemd and answers SSH with its pinned key.
 * Idempotent: on a healthy lab it only checks.
 */
export async function labUp(opts: LabUpOptions = {}): Promise<LabInfo> {
  const { name, dir, files, log } = resolveOpts(opts);
  if (opts.hosts !== undefined) validateHostCount(opts.hosts);
  if (opts.inner !== undefined && opts.hosts !== undefined)
    validateInnerCount(opts.inner, opts.hosts);
  if (opts.arm64Workers !== undefined) validateArm64Workers(opts.arm64Workers);
  const arm64 = opts.arm64Workers ?? 0;
  checkLabPrereqs(
    !existsSync(join(rootfsDir(), 'etc', 'os-release')) ||
      (arm64 > 0 && !existsSync(join(rootfsDir(ARM64_PACKAGES, 'arm64'), 'etc', 'os-release'))),
    arm64 > 0,
  );
  // A new lab's hosts are about to be made; an existing lab's already take their room.
  checkLabDisk(
    dir,
    existsSync(join(dir, 'hosts')) ? 0 : ((opts.hosts ?? DEFAULT_HOSTS) + arm64) * LAB_HOST_BYTES,
  );
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    return await withLock(files.lock, `lab "${name}"`, LOCK_WAIT_MS, () =>
      up(name, files, log, opts),
    );
  } catch (err) {
    // A lab that failed before recording any state owns nothing: leave no empty directory behind.
    if (!existsSync(files.state)) rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

async function up(
  name: string,
  files: LabFiles,
  log: Logger,
  opts: LabUpOptions,
): Promise<LabInfo> {
  const dir = files.dir;
  const existing = readState(files);
  const count = opts.hosts ?? existing?.hosts.length ?? DEFAULT_HOSTS;
  if (existing && existing.hosts.length !== count) {
    throw new InputError(
      '--hosts',
      `lab "${name}" already has ${existing.hosts.length} hosts; run "hardwire lab down --name ${name}" first to change the count`,
    );
  }
  const hadInner = existing?.hosts.filter((h) => h.jump).length;
  const inner = opts.inner ?? hadInner ?? 0;
  validateInnerCount(inner, count);
  if (hadInner !== undefined && hadInner !== inner) {
    throw new InputError(
      '--inner',
      `lab "${name}" already has ${hadInner} inner host(s); run "hardwire lab down --name ${name}" first to change that`,
    );
  }
  if (existing && opts.workers !== undefined && (existing.workers ?? false) !== opts.workers) {
    throw new InputError(
      '--workers',
      `lab "${name}" was made ${existing.workers ? 'with' : 'without'} --workers; run "hardwire lab down --name ${name}" first to change that`,
    );
  }
  if (!existing) await checkRoutes(name, count, inner, opts.stateDir);
  const rootfs = existing?.rootfs ?? (await ensureBaseRootfs(log));
  if (!existsSync(join(rootfs, 'etc', 'os-release'))) {
    throw new StepError(
      'lab-rootfs',
      `base rootfs ${rootfs} of lab "${name}" is gone; run "hardwire lab down --name ${name}" and up again`,
    );
  }
  const state = existing ?? newState(name, count, inner, dir, opts.stateDir, rootfs);
  // The built-in lab is a whole cluster: its hosts run Pods unless it was made without --workers.
  if (!existing && (opts.workers ?? name === DEFAULT_LAB_NAME)) state.workers = true;
  const dedicated = opts.dedicatedWorkers ?? existing?.dedicatedWorkers ?? 0;
  validateDedicatedWorkers(dedicated, count, state.workers === true, inner);
  unchangedCount(
    name,
    '--dedicated-workers',
    'dedicated worker(s)',
    existing && (existing.dedicatedWorkers ?? 0),
    dedicated,
  );
  if (dedicated > 0) state.dedicatedWorkers = dedicated;
  const vmCount = opts.vmWorkers ?? existing?.vms?.length ?? 0;
  validateVmWorkers(vmCount);
  unchangedCount(
    name,
    '--vm-workers',
    'VM worker(s)',
    existing && (existing.vms?.length ?? 0),
    vmCount,
  );
  const arm64Count = opts.arm64Workers ?? existing?.arm64?.length ?? 0;
  validateArm64Workers(arm64Count);
  unchangedCount(
    name,
    '--arm64-workers',
    'arm64 worker(s)',
    existing && (existing.arm64?.length ?? 0),
    arm64Count,
  );
  const record = () => writeState(files, state);
  record();
  const pub = ensureLabKey(files, name);
  await ensureBridge(state);

  const down = state.hosts.filter((h) => !isRunning(h));
  for (const h of down) {
    await stopHost(h); // reaps a container whose nspawn died, so the upper dir is free to edit
    prepareUpper(state, h, pub);
    if (state.workers) prepareWorkerUpper(h);
  }
  writeKnownHosts(files, state);
  writeLabInventory(files, state);
  // `up` restores a healthy lab: reconnect any host left cut.
  for (const h of state.hosts.filter((x) => x.cut && isRunning(x))) {
    await run('ip', ['link', 'set', 'dev', h.veth, 'up'], { step: 'lab-heal', host: h.name });
  }
  for (const h of state.hosts) h.cut = false;
  record();
  const nets = [
    state.subnet,
    ...(state.inner ? [`inner ${state.inner.subnet} behind ${state.inner.bastion}`] : []),
  ].join(', ');
  if (down.length > 0)
    log.step(`booting ${down.map((h) => h.name).join(', ')} (lab "${name}", ${nets})`);
  await Promise.all(down.map((h) => bootHost(state, h, record)));
  log.step(`waiting for sshd and systemd on ${state.hosts.length} host(s)`);
  await Promise.all(state.hosts.map((h) => waitReady(files, h)));
  if (vmCount > 0) await upVms(state, files, log, vmCount, pub, record);
  if (arm64Count > 0) await upArm64Hosts(state, files, log, arm64Count, pub, record);
  log.info(`lab "${name}" is up; inventory: ${files.inventory}`);
  return info(files, state, [
    ...state.hosts.map(upInfo),
    ...(state.vms ?? []).map((v) => ({
      name: v.name,
      address: v.address,
      running: true,
      ssh: true,
      cut: false,
      vm: v.accel,
    })),
    ...(state.arm64 ?? []).map((h) => ({ ...upInfo(h), arch: 'arm64' as const })),
  ]);
}

/** A lab's host counts are fixed once it is up: a different one is refused before anything changes. */
function unchangedCount(
  name: string,
  flag: string,
  what: string,
  had: number | undefined,
  want: number,
): void {
  if (had !== undefined && had !== want)
    throw new InputError(
      flag,
      `lab "${name}" has ${had} ${what}; run "hardwire lab down --name ${name}" first to change that`,
    );
}

/** Boots the lab's VM workers that are not running (a new one gets its disk first), one at a time: each takes both cores while it boots. */
async function upVms(
  state: LabState,
  files: LabFiles,
  log: Logger,
  count: number,
  pub: string,
  record: () => void,
): Promise<void> {
  const vms = state.vms ?? [];
  for (let i = 0; i < count; i++) {
    const plan = vmPlan(state, files.dir, i);
    const had = vms[i];
    if (had && vmRunning(had)) continue;
    log.step(`booting ${plan.name} (QEMU, ${plan.address})`);
    vms[i] = await startVmHost(state, { ...plan, ...(had ?? {}) }, pub, log);
    state.vms = vms;
    record();
    writeKnownHosts(files, state);
    writeLabInventory(files, state);
  }
  log.step(`waiting for sshd and systemd on ${count} VM(s)`);
  for (const v of vms) await waitVm(files, v);
}

/** Removes everything the lab created: containers, veths, bridge, upper dirs, keys and state. */
export async function labDown(opts: LabOptions = {}): Promise<{ name: string; existed: boolean }> {
  const { name, dir, files, log } = resolveOpts(opts);
  if (!existsSync(dir)) return { name, existed: false };
  checkLabPrereqs(false);
  return withLock(files.lock, `lab "${name}"`, LOCK_WAIT_MS, async () => {
    const state = readState(files);
    if (state) {
      // Once the bridge goes, its addresses fall back to the lab range's route: make sure it is there,
      // but never let a foreign route on that range keep a lab from being removed.
      await ensureLabRangeUnreachable().catch((err: unknown) => log.warn((err as Error).message));
      const arm64 = state.arm64?.length ? ` and ${state.arm64.length} arm64 host(s)` : '';
      log.step(`stopping ${state.hosts.length} host(s)${arm64} of lab "${name}"`);
      await Promise.all(state.hosts.map((h) => stopHost(h)));
      for (const v of state.vms ?? []) await stopVm(v);
      await Promise.all((state.arm64 ?? []).map((h) => stopArm64Host(h)));
      writeState(files, state);
      for (const v of state.vms ?? []) removeVmDisk(v);
      // A worker's cgroups on this machine, its Pods' included: empty once it is powered off.
      if (state.workers) for (const h of state.hosts) await removeNodeCgroups(h);
      for (const h of [...state.hosts, ...(state.arm64 ?? [])]) {
        if (await linkExists(h.veth))
          await run('ip', ['link', 'delete', 'dev', h.veth], { step: 'lab-down', host: h.name });
      }
      await removeInner(state);
      if (await linkExists(state.bridge))
        await run('ip', ['link', 'delete', 'dev', state.bridge], { step: 'lab-down' });
    }
    rmSync(dir, { recursive: true, force: true });
    log.info(`lab "${name}" removed`);
    return { name, existed: true };
  });
}

function loadExisting(name: string, files: LabFiles): LabState {
  const state = readState(files);
  if (!state)
    throw new InputError(
      '--name',
      `no lab "${name}" in ${files.dir}; create it with: hardwire lab up --name ${name}`,
    );
  return state;
}

function findHost(state: LabState, host: string): LabHostState {
  const h = state.hosts.find((x) => x.name === host);
  if (!h)
    throw new InputError(
      'host',
      `no host "${host}" in lab "${state.name}"; hosts are ${state.hosts.map((x) => x.name).join(', ')}`,
    );
  return h;
}

/** Per-host running flag (our recorded process alive) and whether SSH answers. */
export async function labStatus(opts: LabOptions = {}): Promise<LabInfo> {
  const { name, files } = resolveOpts(opts);
  const state = loadExisting(name, files);
  const hosts: LabHostInfo[] = await Promise.all(
    state.hosts.map(async (h) => {
      const running = isRunning(h);
      return {
        name: h.name,
        address: h.address,
        running,
        ssh: running && !h.cut ? await sshAnswers(files, h) : false,
        cut: h.cut,
        ...(h.jump ? { jump: h.jump } : {}),
      };
    }),
  );
  for (const v of state.vms ?? [])
    hosts.push({
      name: v.name,
      address: v.address,
      running: vmRunning(v),
      ssh: vmRunning(v) ? await sshAnswers(files, v) : false,
      cut: false,
      vm: v.accel,
    });
  for (const h of state.arm64 ?? []) {
    const running = isRunning(h);
    hosts.push({
      name: h.name,
      address: h.address,
      running,
      ssh: running ? await sshAnswers(files, h) : false,
      cut: false,
      arch: 'arm64',
    });
  }
  return info(files, state, hosts);
}

/** Runs `fn` on one host under the lab lock and saves the state afterwards. */
async function onHost(
  opts: LabOptions,
  host: string,
  fn: (state: LabState, h: LabHostState, files: LabFiles) => Promise<void>,
): Promise<void> {
  const { name, files } = resolveOpts(opts);
  loadExisting(name, files);
  checkLabPrereqs(false);
  await withLock(files.lock, `lab "${name}"`, LOCK_WAIT_MS, async () => {
    const state = loadExisting(name, files);
    const h = findHost(state, host);
    try {
      await fn(state, h, files);
    } finally {
      writeState(files, state);
    }
  });
}

/** Powers a host off; its disk (upper dir) stays. `graceMs` 0 pulls the plug: no orderly shutdown. */
export function labStop(host: string, opts: LabOptions = {}, graceMs?: number): Promise<void> {
  return onHost(opts, host, async (_s, h) => {
    await stopHost(h, graceMs);
  });
}

/** Powers every host off at once (an orderly shutdown each, as labStop); disks, network and state stay. */
export async function labPowerOff(opts: LabOptions = {}): Promise<void> {
  const { name, files } = resolveOpts(opts);
  loadExisting(name, files);
  checkLabPrereqs(false);
  await withLock(files.lock, `lab "${name}"`, LOCK_WAIT_MS, async () => {
    const state = loadExisting(name, files);
    try {
      await Promise.all(state.hosts.map((h) => stopHost(h)));
    } finally {
      writeState(files, state);
    }
  });
}

/** Boots a stopped host again and waits until it is ready. No-op when it runs. */
export function labStart(host: string, opts: LabOptions = {}): Promise<void> {
  return onHost(opts, host, async (state, h, files) => {
    if (isRunning(h)) return;
    await stopHost(h);
    await ensureBridge(state);
    prepareUpper(state, h, ensureLabKey(files, state.name));
    await bootHost(state, h, () => writeState(files, state));
    if (!h.cut) await waitReady(files, h);
  });
}

/** Cuts the host off the lab network (its bridge port goes down): SSH to it times out. */
export function labCut(host: string, opts: LabOptions = {}): Promise<void> {
  return onHost(opts, host, async (_s, h) => {
    h.cut = true;
    if (isRunning(h))
      await run('ip', ['link', 'set', 'dev', h.veth, 'down'], { step: 'lab-cut', host: h.name });
  });
}

/** Restores a cut host's network. */
export function labHeal(host: string, opts: LabOptions = {}): Promise<void> {
  return onHost(opts, host, async (_s, h) => {
    h.cut = false;
    if (isRunning(h))
      await run('ip', ['link', 'set', 'dev', h.veth, 'up'], { step: 'lab-heal', host: h.name });
  });
}

/** An SSH session to a lab host, pinned to the lab's known_hosts. */
export async function labConnect(
  host: string,
  opts: LabOptions & { timeoutMs?: number } = {},
): Promise<Session> {
  const { name, files } = resolveOpts(opts);
  const state = loadExisting(name, files);
  return labConnectHost(files, findHost(state, host), opts.timeoutMs);
}

/** Paths of an existing lab's files (for `lab ssh` and tests). */
export function labPaths(opts: LabOptions = {}): LabFiles {
  return resolveOpts(opts).files;
}
