// A lab host as a QEMU VM (issue 43, first step: measured by scripts/bench-vm.ts): Debian's kernel
// and initramfs from the VM rootfs's /boot, booted directly (-kernel/-initrd), the rootfs itself as
// an ext4 disk made with `mkfs.ext4 -d`, a tap for its network. Nothing comes from the internet but
// the Debian packages debootstrap fetches through this machine's own apt mirror.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdirSync, chmodSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Logger } from '../../lib/log.ts';
import { run } from '../../lib/proc.ts';
import { ensureBaseRootfs, VM_PACKAGES } from './rootfs.ts';

export interface VmHost {
  name: string;
  /** The VM's address on its network, with the prefix length and the gateway it routes through. */
  address: string;
  prefix: number;
  gateway: string;
  /** The public key root's SSH login accepts. */
  authorizedKey: string;
}

export interface VmImage {
  image: string;
  kernel: string;
  initrd: string;
  /** The host key generated into the image, for a pinned known_hosts line. */
  hostKey: string;
}

/** The kernel and initramfs Debian's package installed into the VM rootfs (one of each). */
function bootFiles(root: string): { kernel: string; initrd: string } {
  const boot = readdirSync(join(root, 'boot'));
  const one = (prefix: string) => {
    const f = boot.filter((x) => x.startsWith(prefix));
    if (f.length !== 1) throw new Error(`${root}/boot holds ${f.length} ${prefix}* files, not one`);
    return join(root, 'boot', f[0]!);
  };
  return { kernel: one('vmlinuz-'), initrd: one('initrd.img-') };
}

/**
 * The VM's disk: the VM rootfs with this host's identity (hostname, address, root's authorized key,
 * its own SSH host key), as a sparse ext4 image of `sizeGiB`. The staging copy is removed after.
 */
export async function vmImage(
  host: VmHost,
  image: string,
  log: Logger,
  sizeGiB = 8,
): Promise<VmImage> {
  const root = await ensureBaseRootfs(log, VM_PACKAGES);
  const stage = mkdtempSync(join(dirname(image), '.vm-stage-'));
  const step = { step: 'vm-image', host: host.name };
  try {
    await run('cp', ['-a', '--reflink=auto', `${root}/.`, stage], step);
    const put = (path: string, text: string, mode = 0o644) => {
      mkdirSync(dirname(join(stage, path)), { recursive: true });
      writeFileSync(join(stage, path), text);
      chmodSync(join(stage, path), mode);
    };
    put('etc/hostname', `${host.name}\n`);
    put('etc/hosts', `127.0.0.1 localhost\n127.0.1.1 ${host.name}\n`);
    put('etc/fstab', '/dev/vda / ext4 defaults 0 1\n');
    put(
      'etc/systemd/network/10-lab.network',
      `[Match]\nName=en* eth*\n[Network]\nAddress=${host.address}/${host.prefix}\nGateway=${host.gateway}\n`,
    );
    const wants = join(stage, 'etc/systemd/system/multi-user.target.wants');
    mkdirSync(wants, { recursive: true });
    rmSync(join(wants, 'systemd-networkd.service'), { force: true });
    await run(
      'ln',
      [
        '-s',
        '/lib/systemd/system/systemd-networkd.service',
        join(wants, 'systemd-networkd.service'),
      ],
      step,
    );
    put('root/.ssh/authorized_keys', `${host.authorizedKey.trim()}\n`, 0o600);
    chmodSync(join(stage, 'root/.ssh'), 0o700);
    // Its own host key, generated here so that the operator can pin it before the first connection.
    for (const f of readdirSync(join(stage, 'etc/ssh')))
      if (f.startsWith('ssh_host_')) rmSync(join(stage, 'etc/ssh', f));
    await run(
      'ssh-keygen',
      [
        '-q',
        '-t',
        'ed25519',
        '-N',
        '',
        '-C',
        host.name,
        '-f',
        join(stage, 'etc/ssh/ssh_host_ed25519_key'),
      ],
      step,
    );
    const hostKey = readFileSync(join(stage, 'etc/ssh/ssh_host_ed25519_key.pub'), 'utf8').trim();
    rmSync(image, { force: true });
    await run('truncate', ['-s', `${sizeGiB}G`, image], step);
    await run('mkfs.ext4', ['-q', '-F', '-L', 'hwroot', '-d', stage, image], step);
    return { image, ...bootFiles(root), hostKey };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/**
 * KVM when the CPU offers virtualization (vmx or svm in /proc/cpuinfo) and /dev/kvm exists. The
 * device alone is not enough: on this machine /dev/kvm opens, but QEMU under it fails ("failed to set
 * MSR 0x10a" with -cpu host or max; no console output in 25 s with qemu64), and cpuinfo has neither flag.
 */
function kvmUsable(): boolean {
  return (
    existsSync('/dev/kvm') &&
    /^flags\s*:.*\b(vmx|svm)\b/m.test(readFileSync('/proc/cpuinfo', 'utf8'))
  );
}

/** QEMU's arguments: KVM when it is usable, TCG (software emulation) when not. */
export function qemuArgs(o: {
  vm: VmImage;
  tap: string;
  mac: string;
  memMiB: number;
  cpus: number;
  console: string;
  pidfile: string;
}): { args: string[]; accel: 'kvm' | 'tcg' } {
  const accel = kvmUsable() ? 'kvm' : 'tcg';
  return {
    accel,
    args: [
      '-machine',
      'q35',
      '-accel',
      accel,
      '-cpu',
      accel === 'kvm' ? 'host' : 'max',
      '-m',
      String(o.memMiB),
      '-smp',
      String(o.cpus),
      '-kernel',
      o.vm.kernel,
      '-initrd',
      o.vm.initrd,
      '-append',
      'root=/dev/vda rw console=ttyS0',
      '-drive',
      `file=${o.vm.image},if=virtio,format=raw`,
      '-netdev',
      `tap,id=n0,ifname=${o.tap},script=no,downscript=no`,
      '-device',
      `virtio-net-pci,netdev=n0,mac=${o.mac}`,
      '-display',
      'none',
      '-monitor',
      'none',
      '-serial',
      `file:${o.console}`,
      '-pidfile',
      o.pidfile,
    ],
  };
}

/**
 * Starts QEMU (`prefix` runs it inside a network namespace: ["ip", "netns", "exec", NS]) and waits
 * until `sshOk` answers, at most `timeoutMs`: the process and the seconds from its start.
 */
export async function bootVm(
  args: string[],
  sshOk: () => Promise<boolean>,
  opts: { prefix?: string[]; timeoutMs?: number } = {},
): Promise<{ proc: ChildProcess; seconds: number }> {
  const [cmd, ...rest] = [...(opts.prefix ?? []), 'qemu-system-x86_64', ...args];
  const t = Date.now();
  const proc = spawn(cmd!, rest, { stdio: 'ignore' });
  while (Date.now() - t < (opts.timeoutMs ?? 600_000) && proc.exitCode === null) {
    if (await sshOk()) return { proc, seconds: (Date.now() - t) / 1000 };
    await new Promise((r) => setTimeout(r, 1000));
  }
  proc.kill('SIGKILL');
  throw new Error(
    `the VM did not answer SSH within ${((Date.now() - t) / 1000).toFixed(0)} s (QEMU ${proc.exitCode === null ? 'running' : `exited ${proc.exitCode}`})`,
  );
}
