// The cached Debian 12 base root filesystem every lab host overlays. Built once with debootstrap into a
// temporary directory and renamed into place, so an interrupted build is never used.
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import type { Logger } from '../../lib/log.ts';
import { cacheDir } from '../../lib/paths.ts';
import { run } from '../../lib/proc.ts';
import { withLock } from '../../lib/lock.ts';

export const SUITE = 'bookworm';
// nftables: kube-proxy's nftables mode execs nft (sigs.k8s.io/knftables) on workers.
export const PACKAGES = [
  'systemd',
  'systemd-sysv',
  'dbus',
  'openssh-server',
  'iproute2',
  'ca-certificates',
  'sudo',
  'procps',
  'curl',
  'nftables',
];
const FALLBACK_MIRROR = 'http://deb.debian.org/debian';

/**
 * What a VM host adds to the same base (issue 43): Debian's kernel, and the initramfs that finds its
 * virtio disk (the kernel boots from the image's /boot with -kernel/-initrd).
 */
export const VM_PACKAGES = [...PACKAGES, 'linux-image-amd64', 'initramfs-tools', 'udev', 'kmod'];

/**
 * What an arm64 host adds to the same package list (lab/arm64-host.ts): file, so `file -L /bin/bash`
 * run there over SSH says what the host's binaries are (ARM aarch64).
 */
export const ARM64_PACKAGES = [...PACKAGES, 'file'];

/** Debian architectures a base rootfs is built for: this machine's, or arm64 run through qemu-user (lab/arm64-host.ts). */
export type RootfsArch = 'amd64' | 'arm64';

/**
 * Named by its package list too, so adding a package builds a new rootfs instead of reusing one without it.
 * An arm64 one carries its architecture in the name; the amd64 one keeps the name it always had.
 */
export function rootfsDir(
  packages: readonly string[] = PACKAGES,
  arch: RootfsArch = 'amd64',
): string {
  const tag = createHash('sha256').update(packages.join(',')).digest('hex').slice(0, 8);
  return join(cacheDir(), 'lab', `rootfs-${SUITE}-${arch === 'amd64' ? '' : `${arch}-`}${tag}`);
}

/** The Debian mirror this machine's apt already uses (deb822 or one-line sources), so no new host is contacted. */
export function aptMirror(): string {
  const files = ['/etc/apt/sources.list'];
  for (const dir of ['/etc/apt/sources.list.d']) {
    try {
      files.push(
        ...readdirSync(dir)
          .filter((f) => /\.(list|sources)$/.test(f))
          .sort()
          .map((f) => join(dir, f)),
      );
    } catch {
      /* none */
    }
  }
  for (const f of files) {
    let text: string;
    try {
      text = readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    const found = mirrorFromSources(text);
    if (found) return found;
  }
  return FALLBACK_MIRROR;
}

/** First URI serving the Debian main archive (not -security) in sources text. */
export function mirrorFromSources(text: string): string | undefined {
  for (const line of text.split('\n')) {
    const m = /^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)/.exec(line);
    if (m && m[2] === SUITE && !m[1]!.includes('security')) return m[1]!.replace(/\/$/, '');
  }
  for (const stanza of text.split(/\n\s*\n/)) {
    if (!/^Types:.*\bdeb\b/m.test(stanza)) continue;
    const suites = /^Suites:\s*(.*)$/m.exec(stanza)?.[1]?.split(/\s+/) ?? [];
    const uri = /^URIs:\s*(\S+)/m.exec(stanza)?.[1];
    if (uri && suites.includes(SUITE) && !uri.includes('security')) return uri.replace(/\/$/, '');
  }
  return undefined;
}

/** Returns the base rootfs path, building it first if absent. */
export async function ensureBaseRootfs(
  log: Logger,
  packages: readonly string[] = PACKAGES,
  arch: RootfsArch = 'amd64',
): Promise<string> {
  const dir = rootfsDir(packages, arch);
  if (existsSync(join(dir, 'etc', 'os-release'))) return dir;
  // Under qemu-user the second stage takes minutes: a waiter waits for a whole build.
  const waitMs = (arch === 'amd64' ? 15 : 45) * 60_000;
  return withLock(`${dir}.lock`, `the ${arch} base rootfs build`, waitMs, async () => {
    if (existsSync(join(dir, 'etc', 'os-release'))) return dir; // another process built it meanwhile
    const parent = join(cacheDir(), 'lab');
    mkdirSync(parent, { recursive: true });
    for (const f of readdirSync(parent))
      if (f.startsWith(`.${basename(dir)}.tmp-`))
        rmSync(join(parent, f), { recursive: true, force: true });
    const tmp = join(parent, `.${basename(dir)}.tmp-${process.pid}`);
    const mirror = aptMirror();
    const started = Date.now();
    log.step(
      arch === 'amd64'
        ? `building the Debian ${SUITE} base rootfs with debootstrap from ${mirror} (once, about a minute)`
        : `building the Debian ${SUITE} ${arch} base rootfs with debootstrap from ${mirror}, its second stage under qemu-user (once, a few minutes)`,
    );
    await debootstrap(tmp, mirror, packages, log, arch);
    const seconds = Number(((Date.now() - started) / 1000).toFixed(1));
    customize(tmp, { mirror, seconds, packages, arch });
    renameSync(tmp, dir);
    log.info(`base rootfs ready in ${seconds} s: ${dir}`);
    return dir;
  });
}

async function debootstrap(
  target: string,
  mirror: string,
  packages: readonly string[],
  log: Logger,
  arch: RootfsArch,
): Promise<void> {
  // A foreign architecture: the first stage fetches and unpacks, the second runs the packages'
  // scripts inside the new root, its binaries run by qemu-user through binfmt_misc.
  const foreign = arch === 'amd64' ? [] : [`--arch=${arch}`, '--foreign'];
  const args = [
    ...foreign,
    '--variant=minbase',
    `--include=${packages.join(',')}`,
    SUITE,
    target,
    mirror,
  ];
  let phase = '';
  let lastPrint = 0;
  // debootstrap prints its "I: ..." progress on stdout; errors from the tools it runs go to stderr.
  const onLine = (line: string) => {
    const m = /^I: (\w+)/.exec(line);
    if (!m) return;
    // Print phase changes and a heartbeat every few seconds: plain lines, no terminal tricks.
    const group = m[1] === 'Validating' ? 'Retrieving' : m[1]!; // they alternate per package
    if (group !== phase || Date.now() - lastPrint > 5000) {
      phase = group;
      lastPrint = Date.now();
      log.info(`  debootstrap: ${line.slice(3)}`);
    }
  };
  const opts = {
    step: 'lab-rootfs',
    onStdoutLine: onLine,
    onStderrLine: onLine,
    tailOf: 'all' as const,
    tailLines: 10,
    hint: 'install it with: apt-get install -y debootstrap',
  };
  try {
    const t0 = Date.now();
    await run('debootstrap', args, opts);
    if (foreign.length > 0) {
      const t1 = Date.now();
      log.info(
        `  debootstrap: first stage (fetch, unpack) took ${((t1 - t0) / 1000).toFixed(1)} s`,
      );
      await run('chroot', [target, '/debootstrap/debootstrap', '--second-stage'], {
        ...opts,
        hint: 'chroot is in coreutils',
      });
      log.info(
        `  debootstrap: second stage (configure, under qemu-user) took ${((Date.now() - t1) / 1000).toFixed(1)} s`,
      );
    }
  } catch (err) {
    rmSync(target, { recursive: true, force: true });
    throw err;
  }
}

/** Makes the shared base host-neutral: per-host identity (host keys, machine-id) lives in each upper dir. */
function customize(
  root: string,
  build: { mirror: string; seconds: number; packages: readonly string[]; arch: RootfsArch },
): void {
  const sshDir = join(root, 'etc', 'ssh');
  for (const f of readdirSync(sshDir)) if (f.startsWith('ssh_host_')) rmSync(join(sshDir, f));
  writeFileSync(join(root, 'etc', 'machine-id'), '');
  rmSync(join(root, 'var', 'lib', 'dbus', 'machine-id'), { force: true });
  for (const f of readdirSync(join(root, 'var', 'cache', 'apt', 'archives'))) {
    if (f.endsWith('.deb')) rmSync(join(root, 'var', 'cache', 'apt', 'archives', f));
  }
  writeFileSync(
    join(root, '.hardwire-rootfs.json'),
    `${JSON.stringify({ suite: SUITE, arch: build.arch, packages: build.packages, mirror: build.mirror, built: new Date().toISOString(), debootstrapSeconds: build.seconds }, null, 2)}\n`,
  );
}
