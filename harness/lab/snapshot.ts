// A powered-off lab kept as a copy, with the cluster state wire made for it, restored in seconds.
// A snapshot is keyed by what made it: the lab's shape, the source tree that renders the hosts and the
// base rootfs; it records the cache files of the binaries wire pushed. One whose inputs or binaries
// differ from now is never restored.
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { InputError, StepError } from '../../lib/errors.ts';
import { cacheDir, repoRoot } from '../../lib/paths.ts';
import { run } from '../../lib/proc.ts';
import { withLock } from '../../lib/lock.ts';
import { labConnect, labDown, labPowerOff, labUp, type LabInfo, type LabOptions } from './lab.ts';
import { credsFromKubeconfig, kubeJson } from '../../core/transport/kube-api.ts';
import { labDir } from './plan.ts';
import { checkLabDisk } from './disk.ts';
import { labFiles, readState } from './state.ts';
import type { Inventory } from '../../core/inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import { binariesFor } from '../../core/components/registry/index.ts';
import { ensureImages, ensureRegistryImages } from '../../core/components/image-build.ts';
import { resolveBinaries } from '../../core/apply/binaries.ts';
import { unitOf } from '../../lib/unit.ts';

/** What a snapshot was made from; any field that differs from now makes it stale. */
export interface SnapshotInputs {
  /** name, hosts, inner, workers, dedicatedWorkers: the addresses and roles derive from these. */
  shape: string;
  /** Every file under cli, core, lib and harness, and the lockfile: the code that renders and wires. */
  source: string;
  /** The base rootfs every host's upper dir sits on. */
  rootfs: string;
}

/**
 * The cache files behind every binary and image wire pushed, by path under the cache dir, each with
 * its stat and sha256. Which files wire reads follows from the source (it pins the versions), so a
 * snapshot is current while these are unchanged; a rebuilt binary changes its stat.
 */
export type CacheFiles = Record<string, string>;

export interface SnapshotMeta {
  version: 2;
  inputs: SnapshotInputs;
  binaries: CacheFiles;
  /** Absolute paths the snapshot restores to: the lab's files and the cluster's state. */
  labDir: string;
  clusterDir: string | null;
  createdAt: string;
  bytes: number;
  /** How long the orderly power-off and the copy took when it was made. */
  powerOffMs: number;
  copyMs: number;
}

const SOURCE_DIRS = ['cli', 'core', 'lib', 'harness'];
const SOURCE_FILES = ['package.json', 'pnpm-lock.yaml'];

function walk(dir: string, out: string[]): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.isFile()) out.push(p);
  }
}

/** The content of the code that renders and wires hosts, as one digest. */
export function sourceDigest(root = repoRoot): string {
  const files: string[] = [];
  for (const d of SOURCE_DIRS) if (existsSync(join(root, d))) walk(join(root, d), files);
  for (const f of SOURCE_FILES) if (existsSync(join(root, f))) files.push(join(root, f));
  const h = createHash('sha256');
  for (const f of files.sort())
    h.update(`${relative(root, f)}\0`)
      .update(readFileSync(f))
      .update('\0');
  return h.digest('hex');
}

function statLine(path: string): string {
  try {
    const st = statSync(path, { bigint: true });
    return `${st.size} ${st.ino} ${st.mtimeNs} ${st.ctimeNs}`;
  } catch {
    return 'missing';
  }
}

/** The binaries and images wire pushes to this inventory's hosts, resolved as wire resolves them (the cache, verified by stat). */
export async function cacheFilesInUse(inv: Inventory, log: Logger): Promise<CacheFiles> {
  const names = [...new Set(inv.hosts.flatMap((h) => binariesFor(h).map((b) => b.name)))];
  const bins = await resolveBinaries(inv, names, log);
  const images = [
    ...(inv.workerHosts.length > 0 ? await ensureImages(log, inv.doc.components?.from) : []),
    ...(inv.hosts.some((h) => h.isRegistry)
      ? await ensureRegistryImages(log, inv.doc.components?.from, inv.addons)
      : []),
  ];
  const out: CacheFiles = {};
  for (const b of bins.values())
    out[relative(cacheDir(), b.path)] = `${statLine(b.path)} ${b.sha256}`;
  for (const i of images) out[relative(cacheDir(), i.path)] = `${statLine(i.path)} ${i.sha256}`;
  return out;
}

/** The recorded cache files whose stat moved since (rebuilt, replaced or gone). */
export function changedCacheFiles(recorded: CacheFiles): string[] {
  return Object.entries(recorded)
    .filter(([rel, line]) => !line.startsWith(`${statLine(join(cacheDir(), rel))} `))
    .map(([rel]) => rel);
}

/** The rootfs is built once into a temp dir and renamed into place: its inode and ctime name the build. */
export function rootfsDigest(rootfs: string): string {
  if (!existsSync(rootfs)) return 'missing';
  const st = statSync(join(rootfs, 'etc', 'os-release'), { bigint: true });
  const d = statSync(rootfs, { bigint: true });
  return createHash('sha256')
    .update(`${rootfs} ${d.ino} ${d.birthtimeNs} ${st.ino} ${st.mtimeNs}`)
    .digest('hex');
}

export interface LabShape {
  name: string;
  hosts: number;
  inner?: number;
  workers?: boolean;
  dedicatedWorkers?: number;
}

/** The shape of an existing lab, from its state. */
export function existingShape(opts: LabOptions): LabShape {
  const name = opts.name ?? 'lab';
  const state = readState(labFiles(resolve(labDir(name, opts.stateDir))));
  if (!state)
    throw new InputError(
      '--name',
      `no lab "${name}"; create it with: hardwire lab up --name ${name}`,
    );
  // A VM's disk is a raw image of gigabytes, and a snapshot copies each host's upper dir only.
  if ((state.vms?.length ?? 0) > 0)
    throw new InputError(
      '--name',
      `lab "${name}" has VM workers, which "lab save" does not keep; save a lab without --vm-workers`,
    );
  // Hosts for reading and planning only, over a rootfs of their own that a snapshot's key does not name.
  if ((state.arm64?.length ?? 0) > 0)
    throw new InputError(
      '--name',
      `lab "${name}" has arm64 workers, which "lab save" does not keep; save a lab without --arm64-workers`,
    );
  return {
    name,
    hosts: state.hosts.length,
    inner: state.hosts.filter((h) => h.jump).length,
    workers: state.workers ?? false,
    dedicatedWorkers: state.dedicatedWorkers ?? 0,
  };
}

/** Snapshots a user saves by name (`hardwire lab save NAME`). */
export function savedSnapshotDir(snapshot: string): string {
  if (!/^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$/.test(snapshot)) {
    throw new InputError(
      'snapshot',
      `"${snapshot}" must be a DNS label of at most 40 characters (lowercase letters, digits, "-"), e.g. clean`,
    );
  }
  return join(cacheDir(), 'lab-saves', snapshot);
}

export function shapeOf(s: LabShape): string {
  return JSON.stringify({
    name: s.name,
    hosts: s.hosts,
    inner: s.inner ?? 0,
    workers: s.workers ?? false,
    dedicatedWorkers: s.dedicatedWorkers ?? 0,
  });
}

export function currentInputs(shape: LabShape, rootfs: string, root = repoRoot): SnapshotInputs {
  return { shape: shapeOf(shape), source: sourceDigest(root), rootfs: rootfsDigest(rootfs) };
}

export function snapshotKey(inputs: SnapshotInputs): string {
  return createHash('sha256').update(JSON.stringify(inputs)).digest('hex').slice(0, 16);
}

/** What made the snapshot and differs now, in a fixed order; empty when it is current. */
export function staleInputs(
  meta: Pick<SnapshotMeta, 'inputs' | 'binaries'>,
  now: SnapshotInputs,
): string[] {
  const out: string[] = (['shape', 'source', 'rootfs'] as const).filter(
    (k) => meta.inputs[k] !== now[k],
  );
  if (changedCacheFiles(meta.binaries).length > 0) out.push('binaries');
  return out;
}

export function snapshotsRoot(): string {
  return join(cacheDir(), 'lab-snapshots');
}

export function readSnapshotMeta(dir: string): SnapshotMeta | undefined {
  try {
    const m = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as SnapshotMeta;
    return m.version === 2 && typeof m.labDir === 'string' && typeof m.binaries === 'object'
      ? m
      : undefined;
  } catch {
    return undefined;
  }
}

function duBytes(dir: string): number {
  const files: string[] = [];
  walk(dir, files);
  return files.reduce((n, f) => n + lstatSync(f).size, 0);
}

/** cp -a keeps modes, owners, xattrs and the overlay whiteouts (0/0 character devices) of each upper dir. */
async function copyTree(src: string, dst: string, step: string): Promise<void> {
  mkdirSync(dirname(dst), { recursive: true });
  await run('cp', ['-a', '--', src, dst], { step });
}

/**
 * The cluster dir's entries, less the one that holds the lab dir: the built-in lab "lab" keeps its
 * cluster state in <state>/lab and its lab files in <state>/lab/lab.
 */
function clusterEntries(clusterDir: string, labDirPath: string): string[] {
  const rel = relative(clusterDir, labDirPath);
  const skip = rel && !rel.startsWith('..') ? rel.split('/')[0] : undefined;
  return readdirSync(clusterDir).filter((e) => e !== skip);
}

/** Leader-election Leases whose holders a snapshot must not keep: a new process would wait out their 15 s. */
const LEADER_LEASES = ['kube-controller-manager', 'kube-scheduler'];

/**
 * Before a wired lab is powered off for a snapshot: the controller-manager and the scheduler stopped on
 * every host and their Leases deleted. A restored lab's kube-controller-manager otherwise waits out
 * its old self's Lease (about 19 s measured; it does not release it when stopped), and its gate with it.
 */
export async function releaseLeaderLeases(
  opts: LabOptions,
  adminKubeconfig: string,
): Promise<void> {
  const name = opts.name ?? 'lab';
  const state = readState(labFiles(resolve(labDir(name, opts.stateDir))));
  if (!state) return;
  for (const h of state.hosts) {
    const s = await labConnect(h.name, opts);
    try {
      await s.exec(['systemctl', 'stop', ...LEADER_LEASES.map((u) => unitOf(u))], {
        allowFail: true,
      });
    } finally {
      await s.close();
    }
  }
  const creds = credsFromKubeconfig(adminKubeconfig);
  for (const l of LEADER_LEASES)
    await kubeJson(
      creds,
      'DELETE',
      `/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/${l}`,
      { allow: [404] },
    );
}

export interface SaveOptions extends LabOptions {
  /** Where the snapshot goes (a directory that must not exist yet; replaced atomically if it does). */
  dest: string;
  /** The cluster state wire made for this lab (its PKI, rendered trees, admin kubeconfig). */
  clusterDir?: string;
  inputs: SnapshotInputs;
  binaries: CacheFiles;
}

/**
 * Powers every host off (an orderly shutdown, so etcd and containerd close their files), copies the lab
 * and the cluster state into dest, and leaves the lab powered off: `labUp` boots it again.
 */
export async function saveLabSnapshot(opts: SaveOptions): Promise<SnapshotMeta> {
  const name = opts.name ?? 'lab';
  const dir = resolve(labDir(name, opts.stateDir));
  const state = readState(labFiles(dir));
  if (!state)
    throw new InputError('--name', `no lab "${name}" in ${dir}; create and wire it first`);
  if (opts.clusterDir)
    await releaseLeaderLeases(opts, join(opts.clusterDir, 'kubeconfigs', 'admin.conf'));
  const t0 = Date.now();
  await labPowerOff(opts);
  const stopMs = Date.now() - t0;
  const dest = resolve(opts.dest);
  return withLock(`${dest}.lock`, `snapshot ${dest}`, 10 * 60_000, async () => {
    const tmp = `${dest}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true, mode: 0o700 });
    await copyTree(dir, join(tmp, 'lab'), 'lab-save');
    rmSync(join(tmp, 'lab', '.lock'), { force: true });
    const clusterDir = opts.clusterDir ? resolve(opts.clusterDir) : null;
    if (clusterDir) {
      if (!existsSync(clusterDir))
        throw new InputError(
          '--state-dir',
          `${clusterDir} does not exist; wire the lab before saving it`,
        );
      mkdirSync(join(tmp, 'cluster'), { mode: 0o700 });
      for (const e of clusterEntries(clusterDir, dir))
        await copyTree(join(clusterDir, e), join(tmp, 'cluster', e), 'lab-save');
    }
    const meta: SnapshotMeta = {
      version: 2,
      inputs: opts.inputs,
      binaries: opts.binaries,
      labDir: dir,
      clusterDir,
      createdAt: new Date().toISOString(),
      bytes: duBytes(tmp),
      powerOffMs: stopMs,
      copyMs: Date.now() - t0 - stopMs,
    };
    writeFileSync(join(tmp, 'meta.json'), `${JSON.stringify(meta, null, 2)}\n`, { mode: 0o600 });
    rmSync(dest, { recursive: true, force: true });
    renameSync(tmp, dest);
    return meta;
  });
}

export interface RestoreOptions extends LabOptions {
  src: string;
  /** The inputs as they are now: a snapshot made from others is refused. */
  inputs: SnapshotInputs;
}

/** Replaces the lab (and its cluster state) with the snapshot's copy and boots it. Refuses a stale one. */
export async function restoreLabSnapshot(
  opts: RestoreOptions,
): Promise<{ info: LabInfo; meta: SnapshotMeta }> {
  const src = resolve(opts.src);
  const meta = readSnapshotMeta(src);
  if (!meta)
    throw new InputError(
      '--from',
      `${src} is not a lab snapshot (no readable meta.json); make one with: hardwire lab save NAME`,
    );
  const stale = staleInputs(meta, opts.inputs);
  if (stale.length > 0) {
    throw new StepError(
      'lab-restore',
      `snapshot ${src} is stale: its ${stale.join(', ')} differ from now; wire the lab and save it again`,
    );
  }
  const name = opts.name ?? 'lab';
  const dir = resolve(labDir(name, opts.stateDir));
  if (dir !== meta.labDir) {
    throw new InputError(
      '--name',
      `snapshot ${src} was made of the lab at ${meta.labDir}, not ${dir}; its addresses and paths are that lab's: restore it with the same --name and HARDWIRE_STATE`,
    );
  }
  // Before anything is copied: a lab refused for its disk after the copy would leave the copy behind.
  checkLabDisk(dir, meta.bytes);
  await labDown(opts);
  await withLock(`${src}.lock`, `snapshot ${src}`, 10 * 60_000, async () => {
    await copyTree(join(src, 'lab'), dir, 'lab-restore');
    if (meta.clusterDir) {
      mkdirSync(meta.clusterDir, { recursive: true, mode: 0o700 });
      for (const e of clusterEntries(meta.clusterDir, dir))
        rmSync(join(meta.clusterDir, e), { recursive: true, force: true });
      for (const e of readdirSync(join(src, 'cluster')))
        await copyTree(join(src, 'cluster', e), join(meta.clusterDir, e), 'lab-restore');
    }
  });
  const info = await labUp(opts).catch(async (err: unknown) => {
    await labDown(opts).catch(() => undefined);
    throw err;
  });
  return { info, meta };
}
