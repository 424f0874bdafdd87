// A lab host made ready to run `k0s worker` (worker.ts): what k0s needs on a worker and cannot find
// in this k0s binary, which embeds none of its components (k0s pkg/assets/stage.go StageExecutable
// looks in <data-dir>/bin, then PATH). Every binary is the one built here at the version k0s pins.
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ensureAll, type EnsuredBinary } from '../../../core/components/binaries/index.ts';
import { ensureImages } from '../../../core/components/image-build.ts';
import { bridgeConflist } from '../../../core/components/models/containerd.ts';
import { cacheDir } from '../../../lib/paths.ts';
import { run } from '../../../lib/proc.ts';
import type { Logger } from '../../../lib/log.ts';
import type { Session } from '../../../core/transport/index.ts';
import type { PlaneData } from '../types.ts';
import { K0S_BIN, K0S_DATA } from './config.ts';
import { step } from './controller.ts';
import { K0S_IMAGE_DIR, k0sWorkerImages } from './images.ts';

/**
 * What the worker's k0s stages from its bin dir: containerd with its shim and runc
 * (pkg/component/worker/containerd/component_other.go additionalExecutableNames) and the kubelet.
 */
export const WORKER_PARTS = ['kubelet', 'containerd', 'containerd-shim-runc-v2', 'runc'] as const;
/** The CNI plugins network.provider custom leaves to the host, where containerd's CRI looks by default. */
export const CNI_PARTS = ['bridge', 'host-local', 'loopback', 'portmap'] as const;
export const CNI_BIN = '/opt/cni/bin';
export const CNI_CONF = '/etc/cni/net.d/10-bridge.conflist';
/** k0s's containerd reads drop-ins from here (pkg/component/worker/containerd/component_other.go DefaultImportsPath). */
export const CONTAINERD_DROPIN = '/etc/k0s/containerd.d/hardwire-lab.toml';

/**
 * The lab machine's capability bounding set lacks CAP_SYS_RESOURCE, so no process on a lab host may
 * lower its oom_score_adj; the CRI plugin asks runc for -998 on each sandbox and runc fails it
 * ("failed to update /proc/self/oom_score_adj: Permission denied", workers spike error 5). As
 * hardwire's own containerd config (components/models/containerd.ts) does: clamp to containerd's own.
 */
export const CONTAINERD_OOM_DROPIN = `# hardwire (harness/planes/k0s/worker-host.ts): lab hosts cannot lower oom_score_adj.
version = 3
[plugins."io.containerd.cri.v1.runtime"]
  restrict_oom_score_adj = true
`;

/**
 * Debian's iptables and what it loads beyond the lab rootfs. k0s's worker always runs its
 * iptables-binaries component (cmd/worker/worker.go), which stages xtables-legacy-multi and
 * xtables-nft-multi (pkg/component/iptables/iptables.go) and links iptables* to one of them in its
 * bin dir; a k0s built without embedded binaries needs them from the host. The lab rootfs (minbase)
 * has no netbase, which iptables depends on.
 */
export const IPTABLES_DEBS = [
  'iptables',
  'libip4tc2',
  'libip6tc2',
  'libxtables12',
  'libnetfilter-conntrack3',
  'libnfnetlink0',
  'libnftnl11',
  'libmnl0',
  'netbase',
] as const;
const DEB_DIR = '/var/lib/hardwire/debs';

/** The .debs, downloaded once by apt (this machine's own sources, the lab rootfs's release) into ~/.cache/hardwire/debs. */
export async function ensureIptablesDebs(log: Logger): Promise<string[]> {
  const dir = join(cacheDir(), 'debs');
  const have = () => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.deb')) : []);
  const missing = IPTABLES_DEBS.filter((p) => !have().some((f) => f.startsWith(`${p}_`)));
  if (missing.length > 0) {
    const tmp = `${dir}.tmp-${process.pid}`;
    mkdirSync(tmp, { recursive: true });
    try {
      log.info(`  apt-get download ${missing.join(' ')}`);
      await run('apt-get', ['download', ...missing], {
        step: 'apt-get download (iptables for the k0s worker)',
        cwd: tmp,
        timeoutMs: 300_000,
      });
      mkdirSync(dir, { recursive: true });
      for (const f of readdirSync(tmp)) renameSync(join(tmp, f), join(dir, f));
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  return have()
    .filter((f) => IPTABLES_DEBS.some((p) => f.startsWith(`${p}_`)))
    .map((f) => join(dir, f));
}

export interface PreparedWorker {
  binaries: EnsuredBinary[];
  images: { name: string; ref: string }[];
  debs: string[];
}

/**
 * Stages k0s, its worker binaries, the CNI plugins and config, the containerd drop-in and the image
 * bundles on `s`, installs the iptables .debs, and gives containerd an ext4 root. `podRange` is the
 * Pod range kube-controller-manager gives the first node.
 */
export async function prepareWorkerHost(
  plane: PlaneData,
  s: Session,
  k0s: EnsuredBinary,
  podRange: string,
  version: string,
  log: Logger,
): Promise<PreparedWorker> {
  let t0 = performance.now();
  const binaries = await ensureAll([...WORKER_PARTS, ...CNI_PARTS], {
    kubernetesVersion: version,
    log,
  });
  const images = await ensureImages(log, undefined, await k0sWorkerImages(log));
  const debs = await ensureIptablesDebs(log);
  plane.steps.push({
    step: `worker binaries, ${images.length} images and ${debs.length} iptables .debs built or downloaded here (or cached)`,
    ms: Math.round(performance.now() - t0),
    ok: true,
    output: images.map((i) => i.ref).join('\n'),
  });
  t0 = performance.now();
  const file = (path: string) => ({ file: path, size: statSync(path).size });
  const isCni = (b: EnsuredBinary) => (CNI_PARTS as readonly string[]).includes(b.name);
  await s.exec(['mkdir', '-p', `${K0S_DATA}/bin`, K0S_IMAGE_DIR, '/etc/k0s', CNI_BIN, DEB_DIR]);
  await s.writeFilesAtomic([
    { path: K0S_BIN, mode: 0o755, data: file(k0s.path) },
    ...binaries.map((b) => ({
      path: isCni(b) ? `${CNI_BIN}/${b.name}` : `${K0S_DATA}/bin/${b.name}`,
      mode: 0o755,
      data: file(b.path),
    })),
    ...images.map((i) => ({
      path: `${K0S_IMAGE_DIR}/${i.name}.tar`,
      mode: 0o644,
      data: file(i.path),
    })),
    ...debs.map((d) => ({ path: `${DEB_DIR}/${d.split('/').pop()}`, mode: 0o644, data: file(d) })),
    { path: CNI_CONF, mode: 0o644, data: Buffer.from(bridgeConflist('k0s-pods', podRange)) },
    { path: CONTAINERD_DROPIN, mode: 0o644, data: Buffer.from(CONTAINERD_OOM_DROPIN) },
  ]);
  plane.steps.push({
    step: `stage k0s, ${binaries.length} binaries, ${images.length} image bundles and the iptables .debs on ${s.host.name}`,
    ms: Math.round(performance.now() - t0),
    ok: true,
  });
  await step(plane, s, ['sh', '-c', `dpkg -i ${DEB_DIR}/*.deb`], 'dpkg -i the iptables .debs');
  // k0s links iptables -> xtables-<mode>-multi inside its bin dir, so both must be found there.
  await step(
    plane,
    s,
    [
      'sh',
      '-c',
      `for m in legacy nft; do ln -sf /usr/sbin/xtables-$m-multi ${K0S_DATA}/bin/xtables-$m-multi; done`,
    ],
    "xtables-*-multi into k0s's bin dir",
  );
  // k0s runs containerd with --root=<data-dir>/containerd (pkg/component/worker/containerd/component.go):
  // on the lab host's overlay root the overlayfs snapshotter cannot work, so it is the worker lab
  // host's ext4 bind mount (lab/worker.ts), as /var/lib/containerd is for hardwire's own workers.
  await step(
    plane,
    s,
    ['ln', '-sfn', '/var/lib/containerd', `${K0S_DATA}/containerd`],
    'containerd root on the ext4 bind mount',
  );
  // Pod traffic leaves the node with its Pod address (no masquerade): containerd's CRI and the kubelet need forwarding.
  await step(
    plane,
    s,
    ['sh', '-c', 'echo 1 > /proc/sys/net/ipv4/ip_forward'],
    'net.ipv4.ip_forward = 1',
  );
  return {
    binaries,
    images: images.map((i) => ({ name: i.name, ref: i.ref })),
    debs: debs.map((d) => d.split('/').pop()!),
  };
}
