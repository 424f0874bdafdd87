// The lab's record of what it created: the only source for `down`, which never guesses by name.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StepError } from '../../lib/errors.ts';

export interface LabHostState {
  name: string;
  address: string;
  machine: string;
  veth: string;
  /** Per-host overlay upper dir: the host's "disk". */
  upper: string;
  /** systemd-nspawn's PID and start time (PID reuse guard); null when powered off. */
  pid: number | null;
  startTime: string | null;
  /** The container's PID 1 as seen from here, for nsenter. */
  initPid: number | null;
  initStartTime: string | null;
  /** Network cut by `lab cut`; re-applied when the host boots again. */
  cut: boolean;
  /** Inner hosts (`lab up --inner`): the bastion's address; their host0 is on the inner network. */
  jump?: string;
  /** The bastion: its inner0 on the inner network (host-side veth, address inside). */
  innerLink?: { veth: string; address: string };
}

/** A VM host of the lab (lab/vm-host.ts): a worker, beside the containers. */
export interface LabVmState {
  name: string;
  address: string;
  tap: string;
  mac: string;
  dir: string;
  image: string;
  kernel: string;
  initrd: string;
  /** Its SSH host key, generated into the image (pinned in the lab's known_hosts). */
  hostKey: string;
  accel: 'kvm' | 'tcg';
  pid: number | null;
  startTime: string | null;
}

/** An arm64 host of the lab (lab/arm64-host.ts): a container like the others, over the arm64 base rootfs. */
export interface LabArm64HostState extends LabHostState {
  /** The arm64 base rootfs its overlay sits on. */
  rootfs: string;
}

export interface LabState {
  version: 1;
  name: string;
  subnet: string;
  bridge: string;
  bridgeAddress: string;
  prefix: number;
  rootfs: string;
  hosts: LabHostState[];
  /** The inner network, when the lab has one (lab/inner.ts). */
  inner?: { subnet: string; bridge: string; prefix: number; bastion: string };
  /** `lab up --workers`: every host can run containerd, runc and a kubelet (lab/worker.ts). */
  workers?: boolean;
  /** `lab up --dedicated-workers N`: the last N hosts are workers only, the others etcd + control plane (no kubelet). */
  dedicatedWorkers?: number;
  /** `lab up --vm-workers N`: QEMU VMs, workers only, after the containers in the inventory. */
  vms?: LabVmState[];
  /** `lab up --arm64-workers N`: arm64 containers under qemu-user, workers only, after the VMs in the inventory. */
  arm64?: LabArm64HostState[];
}

export interface LabFiles {
  dir: string;
  state: string;
  key: string;
  knownHosts: string;
  inventory: string;
  lock: string;
}

export function labFiles(dir: string): LabFiles {
  return {
    dir,
    state: join(dir, 'state.json'),
    key: join(dir, 'id_ed25519'),
    knownHosts: join(dir, 'known_hosts'),
    inventory: join(dir, 'inventory.yaml'),
    lock: join(dir, '.lock'),
  };
}

export function readState(files: LabFiles): LabState | undefined {
  if (!existsSync(files.state)) return undefined;
  try {
    const s = JSON.parse(readFileSync(files.state, 'utf8')) as LabState;
    if (s.version !== 1 || !Array.isArray(s.hosts)) throw new Error('unknown version');
    return s;
  } catch (err) {
    throw new StepError(
      'lab-state',
      `${files.state} is unreadable (${(err as Error).message}); remove the lab's processes by hand and delete ${files.dir}`,
    );
  }
}

/** Write-then-rename so a crash never leaves a half-written state file. */
export function writeState(files: LabFiles, state: LabState): void {
  const tmp = `${files.state}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, files.state);
}
