// A lab for one test file, torn down afterwards. Its state dir is stable per lab name, so a run
// that crashed (leaving a bridge, veths or containers) is cleaned up by the next run's labDown
// instead of blocking it.
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { labDown, labUp, labConnect, type LabInfo } from '../../harness/lab/index.ts';
import type { Session } from '../../core/transport/index.ts';
import { hardwire } from './cli.ts';

export interface TestLab { name: string; stateDir: string; info: LabInfo; ssh(host: string): Promise<Session>; down(): Promise<void> }

export async function testLab(name: string, hosts: number, opts: { workers?: boolean; dedicatedWorkers?: number } = {}): Promise<TestLab> {
  const stateDir = join(tmpdir(), 'hardwire-test-labs', name);
  await labDown({ name, stateDir }).catch(() => undefined);
  // Labs a test made inside its cluster state dir (compare's kubeadm host) go down too.
  const nested = join(stateDir, 'state');
  const nestedLabs = existsSync(join(nested, 'lab')) ? readdirSync(join(nested, 'lab')) : [];
  for (const n of nestedLabs) await labDown({ name: n, stateDir: nested }).catch(() => undefined);
  rmSync(stateDir, { recursive: true, force: true });
  mkdirSync(stateDir, { recursive: true });
  // A lab that failed to come up is taken down here: the test's afterAll never sees it.
  const info = await labUp({ name, stateDir, hosts, ...(opts.workers ? { workers: true } : {}), ...(opts.dedicatedWorkers ? { dedicatedWorkers: opts.dedicatedWorkers } : {}) }).catch(async (err: unknown) => {
    await labDown({ name, stateDir }).catch(() => undefined);
    throw err;
  });
  return {
    name, stateDir, info,
    ssh: (host) => labConnect(host, { name, stateDir }),
    down: async () => { await labDown({ name, stateDir }); },
  };
}

export async function remote(s: Session, argv: string[]): Promise<string> {
  return (await s.exec(argv, { allowFail: true })).stdout.trim();
}

export interface WiredLab { lab: TestLab; inv: string; state: string }

/** A test lab with the control plane wired on it by the real CLI, state under the lab's dir. */
export async function wiredTestLab(name: string, hosts: number, opts: { workers?: boolean } = {}): Promise<WiredLab> {
  const lab = await testLab(name, hosts, opts);
  const state = join(lab.stateDir, 'state');
  const w = hardwire(['wire', '--inventory', lab.info.inventory, '--state-dir', state], { timeoutMs: 900_000 });
  if (w.code !== 0) {
    await lab.down().catch(() => undefined);
    // The error line first: the journal tail after it can be longer than what is shown.
    throw new Error(`wire on test lab ${name} exited ${w.code}: ${w.stderr.split('\n').find((l) => l.startsWith('error:')) ?? ''}\n${w.stderr.slice(-3000)}`);
  }
  return { lab, inv: lab.info.inventory, state };
}
