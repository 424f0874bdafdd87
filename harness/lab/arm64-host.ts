// A lab host whose whole userland is Debian bookworm arm64 (`lab up --arm64-workers N`): a container
// like the others (systemd-nspawn --boot, a veth on the lab bridge, its own pinned host key), over an
// arm64 base rootfs, every program in it run by qemu-user through binfmt_misc, so `uname -m` over
// SSH says aarch64. For reading and planning only (preflight, wire --dry-run): a kubelet, containerd
// and runc cannot run under qemu-user, so such a host is never wired for real.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError, StepError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import { isSameProcess } from '../../lib/pid.ts';
import { run } from '../../lib/proc.ts';
import { waitFor } from '../../lib/retry.ts';
import { bootHost, isRunning, stopHost } from './container.ts';
import { prepareUpper, writeKnownHosts, writeLabInventory } from './prepare.ts';
import { waitReady } from './ready.ts';
import { ARM64_PACKAGES, ensureBaseRootfs } from './rootfs.ts';
import type { LabArm64HostState, LabFiles, LabState } from './state.ts';

const MAX_ARM64_WORKERS = 4;
/** systemd, journald and sshd each start under emulation; boot to a settled systemd is slower than a container's. */
const BOOT_TIMEOUT_MS = 300_000;

const BINFMT_DIR = '/proc/sys/fs/binfmt_misc';
const BINFMT_ENTRY = join(BINFMT_DIR, 'qemu-aarch64');
const BINFMT_HINT =
  'install qemu-user and its binfmt_misc handlers with: apt-get install -y qemu-user-static binfmt-support';

export function validateArm64Workers(n: number): void {
  if (!Number.isInteger(n) || n < 0 || n > MAX_ARM64_WORKERS)
    throw new InputError(
      '--arm64-workers',
      `must be a whole number from 0 to ${MAX_ARM64_WORKERS} (each runs its whole userland under qemu-user)`,
    );
}

/** The i-th arm64 host's name, address, nspawn machine, veth and upper dir: from the lab's subnet and bridge name, stable across runs. */
function arm64Plan(
  state: Pick<LabState, 'subnet' | 'bridge'>,
  labDir: string,
  i: number,
): Pick<LabArm64HostState, 'name' | 'address' | 'machine' | 'veth' | 'upper'> {
  const net = state.subnet.split('.').slice(0, 3).join('.');
  const tag = state.bridge.slice(3);
  const name = `arm${i + 1}`;
  return {
    name,
    // Containers take .11 up (at most 16), VMs .50 up (at most 4): .60 up is free.
    address: `${net}.${60 + i}`,
    machine: `hw-${tag}-${name}`,
    veth: `hwa${tag}-${i + 1}`,
    upper: join(labDir, 'hosts', name, 'upper'),
  };
}

/** What binfmt_misc says of its qemu-aarch64 handler: absent, or its state and flags. */
function binfmtEntry(): { enabled: boolean; flags: string; interpreter: string } | undefined {
  let text: string;
  try {
    text = readFileSync(BINFMT_ENTRY, 'utf8');
  } catch {
    return undefined;
  }
  return {
    enabled: /^enabled$/m.test(text),
    flags: /^flags:\s*(\S*)/m.exec(text)?.[1] ?? '',
    interpreter: /^interpreter\s+(\S+)/m.exec(text)?.[1] ?? '?',
  };
}

/**
 * The kernel runs an aarch64 ELF through qemu-aarch64-static, and with the F (fix-binary) flag: the
 * kernel opens the interpreter when the handler is registered, so it also runs inside a container
 * whose root has no qemu. Registered here when absent (binfmt-support's import of Debian's format,
 * which has fix_binary yes: nothing starts binfmt-support.service on a machine without systemd).
 */
async function ensureAarch64Binfmt(log: Logger): Promise<void> {
  const step = { step: 'lab-binfmt' };
  if (!existsSync(join(BINFMT_DIR, 'register')))
    await run('mount', ['-t', 'binfmt_misc', 'binfmt_misc', BINFMT_DIR], step);
  if (!binfmtEntry()) {
    log.step('registering the qemu-aarch64 binfmt_misc handler (fix-binary)');
    await run('update-binfmts', ['--enable', 'qemu-aarch64'], { ...step, hint: BINFMT_HINT });
  }
  const e = binfmtEntry();
  if (!e)
    throw new StepError(
      'lab-binfmt',
      `update-binfmts registered no qemu-aarch64 handler in ${BINFMT_DIR}; ${BINFMT_HINT}`,
    );
  if (!e.enabled) {
    log.step('enabling the qemu-aarch64 binfmt_misc handler');
    writeFileSync(BINFMT_ENTRY, '1');
  }
  if (!e.flags.includes('F'))
    throw new StepError(
      'lab-binfmt',
      `the qemu-aarch64 binfmt_misc handler (${e.interpreter}) has no F (fix-binary) flag, so an arm64 container cannot find its interpreter; register it again with: echo -1 > ${BINFMT_ENTRY}; update-binfmts --enable qemu-aarch64`,
    );
}

/**
 * Units that load credentials fail under qemu-user at exec ("Failed to set up credentials: Invalid
 * argument", status 243/CREDENTIALS): systemd-tmpfiles-setup (so /run is not populated),
 * systemd-sysusers (so the lab's sudo user is never made) and systemd-sysctl. A drop-in with an
 * empty LoadCredential= clears each unit's list; none of those credentials is ever given to a lab host.
 */
const CREDENTIAL_UNITS = [
  'systemd-sysctl',
  'systemd-sysusers',
  'systemd-tmpfiles-setup',
  'systemd-tmpfiles-setup-dev',
  'systemd-tmpfiles-clean',
];

function prepareArm64Upper(host: LabArm64HostState): void {
  for (const unit of CREDENTIAL_UNITS) {
    const dir = join(host.upper, 'etc', 'systemd', 'system', `${unit}.service.d`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'hardwire-qemu-user.conf'),
      '# hardwire lab, arm64 under qemu-user: setting up credentials fails there (lab/arm64-host.ts).\n[Service]\nLoadCredential=\n',
    );
  }
}

/**
 * Powers an arm64 host off. Not with nspawn's SIGTERM: nspawn sends the init SIGRTMIN+3, which qemu-user
 * hands to the guest as another real-time signal (systemd there isolated rescue.target, sshd stopped,
 * and nspawn kept running). A `kill -s RTMIN+4 1` run inside goes through the same qemu mapping, so
 * systemd gets its poweroff signal; what is still running after `graceMs` is killed.
 */
export async function stopArm64Host(host: LabArm64HostState, graceMs = 20_000): Promise<void> {
  if (isRunning(host) && isSameProcess(host.initPid, host.initStartTime)) {
    const r = await run(
      'nsenter',
      [
        `--target=${host.initPid}`,
        '--mount',
        '--pid',
        '--root',
        '--wd=/',
        '--',
        'kill',
        '-s',
        'RTMIN+4',
        '1',
      ],
      { step: 'lab-down', host: host.name, allowFail: true },
    );
    if (r.code === 0) await waitFor(() => !isRunning(host), graceMs);
  }
  await stopHost(host, 0);
}

/** The arm64 base rootfs, built once like the amd64 one, after the handler its second stage needs. */
export async function ensureArm64Rootfs(log: Logger): Promise<string> {
  await ensureAarch64Binfmt(log);
  return ensureBaseRootfs(log, ARM64_PACKAGES, 'arm64');
}

/** Boots the arm64 hosts that are not running (a new one gets its upper dir first), then waits for sshd and systemd on each. */
export async function upArm64Hosts(
  state: LabState,
  files: LabFiles,
  log: Logger,
  count: number,
  pub: string,
  record: () => void,
): Promise<LabArm64HostState[]> {
  const hosts = state.arm64 ?? [];
  const rootfs = hosts[0]?.rootfs ?? (await ensureArm64Rootfs(log));
  if (!existsSync(join(rootfs, 'etc', 'os-release')))
    throw new StepError(
      'lab-rootfs',
      `arm64 base rootfs ${rootfs} of lab "${state.name}" is gone; run "hardwire lab down --name ${state.name}" and up again`,
    );
  // A handler lost since the last up (a reboot) is registered again before anything arm64 runs.
  await ensureAarch64Binfmt(log);
  for (let i = 0; i < count; i++) {
    hosts[i] ??= {
      ...arm64Plan(state, files.dir, i),
      rootfs,
      pid: null,
      startTime: null,
      initPid: null,
      initStartTime: null,
      cut: false,
    };
  }
  state.arm64 = hosts;
  record();
  const down = hosts.filter((h) => !isRunning(h));
  for (const h of down) {
    await stopHost(h);
    prepareUpper(state, h, pub);
    prepareArm64Upper(h);
  }
  record();
  writeKnownHosts(files, state);
  writeLabInventory(files, state);
  const t0 = Date.now();
  if (down.length > 0) {
    log.step(`booting ${down.map((h) => h.name).join(', ')} (arm64 under qemu-user)`);
    for (const h of down) await bootHost(state, h, record, { rootfs: h.rootfs, worker: false });
  }
  log.step(`waiting for sshd and systemd on ${hosts.length} arm64 host(s)`);
  for (const h of hosts) await waitReady(files, h, BOOT_TIMEOUT_MS);
  if (down.length > 0)
    log.info(
      `arm64 host(s) up in ${((Date.now() - t0) / 1000).toFixed(1)} s from boot to SSH with systemd settled`,
    );
  return hosts;
}
