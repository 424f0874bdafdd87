// A lab host that is a QEMU VM (`lab up --vm-workers N`): Debian's kernel, cgroup v2, its own
// clock, swap and disk; on a tap on the lab bridge, at .50 and up of the lab's /24, a worker of the
// lab's cluster beside its containers. The disk image, kernel and pinned host key come from
// harness/lab/vm.ts; KVM when the CPU offers it, TCG (software emulation) when not.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { InputError, StepError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import { isSameProcess, procStartTime } from '../../lib/pid.ts';
import { run, spawnDetached } from '../../lib/proc.ts';
import { waitFor } from '../../lib/retry.ts';
import { labConnectHost } from './ready.ts';
import { linkExists } from './sys.ts';
import type { LabFiles, LabState, LabVmState } from './state.ts';
import { qemuArgs, vmImage } from './vm.ts';

export const MAX_VM_WORKERS = 4;
/** Per VM: 2 vCPUs (this machine has 2 cores) and enough memory for containerd, the kubelet and a few Pods. */
const VM_CPUS = 2;
const VM_MEM_MIB = 3072;
const VM_DISK_GIB = 8;
/** Boot to SSH under TCG on this 2-core machine took 24-39 s (docs/measurements.md). */
const BOOT_TIMEOUT_MS = 300_000;

export function validateVmWorkers(n: number): void {
  if (!Number.isInteger(n) || n < 0 || n > MAX_VM_WORKERS)
    throw new InputError(
      '--vm-workers',
      `must be a whole number from 0 to ${MAX_VM_WORKERS} (each VM takes ${VM_CPUS} vCPUs and ${VM_MEM_MIB} MiB)`,
    );
}

/** The i-th VM's name, address, tap and MAC: from the lab's subnet and bridge name, stable across runs. */
export function vmPlan(
  state: Pick<LabState, 'subnet' | 'bridge'>,
  labDir: string,
  i: number,
): Pick<LabVmState, 'name' | 'address' | 'tap' | 'mac' | 'dir'> {
  const net = state.subnet.split('.').slice(0, 3).join('.');
  const tag = state.bridge.slice(3);
  const name = `vm${i + 1}`;
  const mac = `52:54:00:${tag.slice(0, 2)}:${tag.slice(2, 4)}:${(i + 1).toString(16).padStart(2, '0')}`;
  return {
    name,
    address: `${net}.${50 + i}`,
    tap: `hwt${tag}-${i + 1}`,
    mac,
    dir: join(labDir, 'vms', name),
  };
}

export function vmRunning(vm: LabVmState): boolean {
  return isSameProcess(vm.pid, vm.startTime);
}

/** Makes the VM's disk if it has none (a new VM), its tap on the lab bridge, and boots it if it is not running. */
export async function startVmHost(
  state: LabState,
  vm: Pick<LabVmState, 'name' | 'address' | 'tap' | 'mac' | 'dir'> & Partial<LabVmState>,
  pub: string,
  log: Logger,
): Promise<LabVmState> {
  const step = { step: 'lab-vm', host: vm.name };
  mkdirSync(vm.dir, { recursive: true, mode: 0o700 });
  const image = join(vm.dir, 'disk.img');
  const made =
    vm.image && existsSync(image) && vm.kernel && vm.initrd && vm.hostKey
      ? { image, kernel: vm.kernel, initrd: vm.initrd, hostKey: vm.hostKey }
      : await vmImage(
          {
            name: vm.name,
            address: vm.address,
            prefix: state.prefix,
            gateway: state.bridgeAddress,
            authorizedKey: pub,
          },
          image,
          log,
          VM_DISK_GIB,
        );
  if (!(await linkExists(vm.tap))) {
    await run('ip', ['tuntap', 'add', vm.tap, 'mode', 'tap'], step);
    await run('ip', ['link', 'set', vm.tap, 'master', state.bridge], step);
    await run('ip', ['link', 'set', vm.tap, 'up'], step);
  }
  const q = qemuArgs({
    vm: made,
    tap: vm.tap,
    mac: vm.mac,
    memMiB: VM_MEM_MIB,
    cpus: VM_CPUS,
    console: join(vm.dir, 'console.log'),
    pidfile: join(vm.dir, 'qemu.pid'),
  });
  const out: LabVmState = {
    ...vm,
    ...made,
    accel: q.accel,
    pid: vm.pid ?? null,
    startTime: vm.startTime ?? null,
  };
  if (vmRunning(out)) return out;
  // detached: the VM outlives the command that started it, as a container host does.
  const pid = await spawnDetached('qemu-system-x86_64', q.args, {
    ...step,
    output: join(vm.dir, 'qemu.log'),
    hint: 'install it with: apt-get install -y qemu-system-x86',
  });
  out.pid = pid;
  out.startTime = procStartTime(pid) ?? null;
  return out;
}

/** Waits until root logs in over SSH with the pinned key and systemd has finished booting. */
export async function waitVm(files: LabFiles, vm: LabVmState): Promise<void> {
  const t0 = Date.now();
  let last = '';
  const up = await waitFor(
    async () => {
      if (!vmRunning(vm)) return true;
      try {
        const s = await labConnectHost(files, vm, 5000);
        try {
          const r = await s.exec(['systemctl', 'is-system-running', '--wait'], {
            allowFail: true,
            timeoutMs: 120_000,
          });
          last = r.stdout.trim();
          return last === 'running' || last === 'degraded';
        } finally {
          await s.close();
        }
      } catch (err) {
        last = (err as Error).message;
        return false;
      }
    },
    BOOT_TIMEOUT_MS,
    2000,
  );
  if (!vmRunning(vm) || !up)
    throw new StepError(
      'lab-vm',
      `${vmRunning(vm) ? `did not answer SSH with systemd up within ${Math.round((Date.now() - t0) / 1000)} s (${last})` : 'QEMU exited'} (console: ${join(vm.dir, 'console.log')}, QEMU: ${join(vm.dir, 'qemu.log')})`,
      { host: vm.name },
    );
}

/** Powers the VM off (SIGKILL: its disk is thrown away with the lab) and removes its tap. */
export async function stopVm(vm: LabVmState): Promise<void> {
  if (vmRunning(vm)) {
    process.kill(vm.pid!, 'SIGKILL');
    await waitFor(async () => !vmRunning(vm), 10_000, 100);
  }
  vm.pid = null;
  vm.startTime = null;
  if (await linkExists(vm.tap))
    await run('ip', ['link', 'delete', 'dev', vm.tap], { step: 'lab-down', host: vm.name });
}

export function removeVmDisk(vm: LabVmState): void {
  rmSync(vm.dir, { recursive: true, force: true });
}
