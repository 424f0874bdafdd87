// A lab for one test file, torn down afterwards. Its state dir is stable per lab name, so a run
// that crashed (leaving a bridge, veths or containers) is cleaned up by the next run's labDown
// instead of blocking it. A wired lab is restored from a snapshot made by the first file that
// wired the same shape with the same code, binaries and rootfs (harness/lab/snapshot.ts).
import { appendFileSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { expect } from 'vitest';
import { labDown, labUp, labConnect, rootfsDir, type LabInfo } from '../../harness/lab/index.ts';
import {
  cacheFilesInUse,
  currentInputs,
  readSnapshotMeta,
  restoreLabSnapshot,
  saveLabSnapshot,
  snapshotKey,
  snapshotsRoot,
  staleInputs,
  type LabShape,
} from '../../harness/lab/snapshot.ts';
import type { Session } from '../../core/transport/index.ts';
import { repoRoot } from '../../lib/paths.ts';
import { stderrLogger } from '../../lib/log.ts';
import { loadValidInventory } from '../../core/validate/inventory.ts';
import { hardwire } from './cli.ts';

export interface TestLab {
  name: string;
  stateDir: string;
  info: LabInfo;
  ssh(host: string): Promise<Session>;
  down(): Promise<void>;
}

/** Setup phases go to $HARDWIRE_PROFILE (one JSON line each) for `pnpm bench suite`. */
export type SetupPhase = 'boot' | 'wire' | 'save' | 'restore' | 'gate';

export function recordPhase(lab: string, phase: SetupPhase, ms: number): void {
  const out = process.env.HARDWIRE_PROFILE;
  if (!out) return;
  let file = 'unknown';
  try {
    file = relative(repoRoot, expect.getState().testPath ?? 'unknown');
  } catch {
    /* outside a test file */
  }
  mkdirSync(dirname(out), { recursive: true });
  appendFileSync(out, `${JSON.stringify({ file, lab, phase, ms: Math.round(ms) })}\n`);
}

async function timed<T>(lab: string, phase: SetupPhase, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  try {
    return await fn();
  } finally {
    recordPhase(lab, phase, performance.now() - t0);
  }
}

function labStateDir(name: string): string {
  return join(tmpdir(), 'hardwire-test-labs', name);
}

/** Takes down whatever a previous run left under this lab's state dir, nested labs included. */
async function clearLab(name: string, stateDir: string): Promise<void> {
  await labDown({ name, stateDir }).catch(() => undefined);
  // Labs a test made inside its cluster state dir (compare's kubeadm host) go down too.
  const nested = join(stateDir, 'state');
  const nestedLabs = existsSync(join(nested, 'lab')) ? readdirSync(join(nested, 'lab')) : [];
  for (const n of nestedLabs) await labDown({ name: n, stateDir: nested }).catch(() => undefined);
  rmSync(stateDir, { recursive: true, force: true });
  mkdirSync(stateDir, { recursive: true });
}

function handle(name: string, stateDir: string, info: LabInfo): TestLab {
  return {
    name,
    stateDir,
    info,
    ssh: (host) => labConnect(host, { name, stateDir }),
    down: async () => {
      await labDown({ name, stateDir });
    },
  };
}

export async function testLab(
  name: string,
  hosts: number,
  opts: {
    workers?: boolean;
    dedicatedWorkers?: number;
    vmWorkers?: number;
    arm64Workers?: number;
  } = {},
): Promise<TestLab> {
  const stateDir = labStateDir(name);
  await clearLab(name, stateDir);
  // A lab that failed to come up is taken down here: the test's afterAll never sees it.
  const info = await timed(name, 'boot', () =>
    labUp({
      name,
      stateDir,
      hosts,
      ...(opts.workers ? { workers: true } : {}),
      ...(opts.dedicatedWorkers ? { dedicatedWorkers: opts.dedicatedWorkers } : {}),
      ...(opts.vmWorkers ? { vmWorkers: opts.vmWorkers } : {}),
      ...(opts.arm64Workers ? { arm64Workers: opts.arm64Workers } : {}),
    }),
  ).catch(async (err: unknown) => {
    await labDown({ name, stateDir }).catch(() => undefined);
    throw err;
  });
  return handle(name, stateDir, info);
}

export async function remote(s: Session, argv: string[]): Promise<string> {
  return (await s.exec(argv, { allowFail: true })).stdout.trim();
}

/**
 * After a debug kube-apiserver ran beside the unit (trace apply, learn --live): the unit still
 * active on `host`, the debug unit not, and no scratch directory of it left.
 */
export async function expectDebugApiserverGone(lab: TestLab, host: string): Promise<void> {
  const s = await lab.ssh(host);
  try {
    expect(await remote(s, ['systemctl', 'is-active', 'kube-apiserver.service'])).toBe('active');
    expect(
      await remote(s, ['systemctl', 'is-active', 'hardwire-trace-kube-apiserver.service']),
    ).not.toBe('active');
    expect(
      await remote(s, ['sh', '-c', 'ls -d /var/tmp/hardwire-trace.* 2>/dev/null || true']),
    ).toBe('');
  } finally {
    await s.close();
  }
}

export interface WiredLab {
  lab: TestLab;
  inv: string;
  state: string;
  /** The freshly wired cluster again: the snapshot restored (seconds), else a teardown and a wire from nothing. */
  reset(): Promise<void>;
}

interface WireReport {
  plan: { hosts: { host: string; changes: { path: string; reason: string }[] }[] };
  restarted: { host: string; unit: string }[];
}

function wireOrThrow(lab: TestLab, state: string, why: string): WireReport {
  const w = hardwire(['wire', '--inventory', lab.info.inventory, '--state-dir', state, '--json'], {
    timeoutMs: 900_000,
  });
  if (w.code !== 0) {
    // The error line first: the journal tail after it can be longer than what is shown.
    throw new Error(
      `wire (${why}) on test lab ${lab.name} exited ${w.code}: ${w.stderr.split('\n').find((l) => l.startsWith('error:')) ?? ''}\n${w.stderr.slice(-3000)}`,
    );
  }
  return JSON.parse(w.stdout) as WireReport;
}

/** A restored lab must be exactly what wire makes: a wire that changes a file or restarts a unit means the snapshot was not. */
function expectNoop(r: WireReport, lab: string): void {
  const changes = r.plan.hosts.flatMap((h) =>
    h.changes.map((c) => `${h.host}:${c.path} (${c.reason})`),
  );
  const restarts = r.restarted.map((x) => `${x.host}:${x.unit}`);
  if (changes.length + restarts.length > 0) {
    throw new Error(
      `restored lab ${lab} differs from what wire makes: changed ${changes.slice(0, 5).join(', ') || 'nothing'}; restarted ${restarts.join(', ') || 'nothing'}`,
    );
  }
}

/** Where a wired lab of this shape, made by this code, these binaries and this rootfs, is kept. */
export function wiredSnapshotDir(
  shape: LabShape,
  root = repoRoot,
): { dir: string; inputs: ReturnType<typeof currentInputs> } {
  const inputs = currentInputs(shape, rootfsDir(), root);
  return { dir: join(snapshotsRoot(), shape.name, snapshotKey(inputs)), inputs };
}

/**
 * A test lab with the control plane wired on it by the real CLI, state under the lab's dir. Restored
 * from a current snapshot when there is one (HARDWIRE_SNAPSHOTS=0: never), else wired and saved.
 * Either way the real `wire` runs last as the gate: on a restored lab it changes nothing and waits
 * for every gate. Files that share a shape share a name, and so one snapshot. `fresh`: wire from
 * nothing, no snapshot (the tests of wire itself).
 */
export async function wiredTestLab(
  name: string,
  hosts: number,
  opts: { workers?: boolean; dedicatedWorkers?: number; fresh?: boolean } = {},
): Promise<WiredLab> {
  const { fresh, ...labOpts } = opts;
  const shape: LabShape = { name, hosts, ...labOpts };
  const stateDir = labStateDir(name);
  const state = join(stateDir, 'state');
  // fresh: a test of wire itself wires from nothing and keeps no snapshot. Workers labs too, for now:
  // power-cycled, a 1-host workers lab's kubelet did not admit its probe Pod again within verify's
  // gate ("pod does not exist" on exec, 2026-12-06), and a no-op wire reads only the Pod's stale phase.
  const use = !fresh && !labOpts.workers && process.env.HARDWIRE_SNAPSHOTS !== '0';
  const snap = use ? wiredSnapshotDir(shape) : undefined;
  const restore = async (): Promise<TestLab> => {
    await clearLab(name, stateDir);
    const { info } = await timed(name, 'restore', () =>
      restoreLabSnapshot({ name, stateDir, src: snap!.dir, inputs: snap!.inputs }),
    );
    const lab = handle(name, stateDir, info);
    try {
      expectNoop(
        await timed(name, 'gate', async () => wireOrThrow(lab, state, 'after restore')),
        name,
      );
    } catch (err) {
      await lab.down().catch(() => undefined);
      throw err;
    }
    return lab;
  };
  const current = () => {
    const meta = snap ? readSnapshotMeta(snap.dir) : undefined;
    return meta !== undefined && staleInputs(meta, snap!.inputs).length === 0;
  };
  const resetBy = (lab: TestLab) => async () => {
    if (current()) {
      await restore();
      return;
    }
    const td = hardwire(
      ['teardown', '--inventory', lab.info.inventory, '--state-dir', state, '--purge-data'],
      { timeoutMs: 300_000 },
    );
    if (td.code !== 0)
      throw new Error(`teardown on test lab ${name} exited ${td.code}: ${td.stderr.slice(-2000)}`);
    await timed(name, 'wire', async () => wireOrThrow(lab, state, 'reset'));
  };
  if (current()) {
    const lab = await restore();
    return { lab, inv: lab.info.inventory, state, reset: resetBy(lab) };
  }
  const lab = await testLab(name, hosts, labOpts);
  try {
    await timed(name, 'wire', async () => wireOrThrow(lab, state, 'from nothing'));
    if (snap) {
      // Older snapshots of this lab were made by other code or binaries: only the current one is kept.
      rmSync(join(snapshotsRoot(), name), { recursive: true, force: true });
      await timed(name, 'save', async () => {
        const binaries = await cacheFilesInUse(
          loadValidInventory(lab.info.inventory),
          stderrLogger(true),
        );
        await saveLabSnapshot({
          name,
          stateDir,
          dest: snap.dir,
          clusterDir: join(state, name),
          inputs: snap.inputs,
          binaries,
        });
        await labUp({ name, stateDir });
      });
      expectNoop(
        await timed(name, 'gate', async () => wireOrThrow(lab, state, 'after save')),
        name,
      );
    }
  } catch (err) {
    await lab.down().catch(() => undefined);
    throw err;
  }
  return { lab, inv: lab.info.inventory, state, reset: resetBy(lab) };
}
