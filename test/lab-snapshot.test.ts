// Wired labs restored from snapshots (issue 39): a snapshot is never used once anything that made it
// changed, and a restored lab is the saved cluster, read back from the hosts and the API. Runs on the
// shared 1-host wired lab ("w1"): restored if a current snapshot exists, else wired and saved here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { globalAgent } from 'node:https';
import {
  cpSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { hardwire } from './helpers/cli.ts';
import { remote, wiredSnapshotDir, wiredTestLab, type WiredLab } from './helpers/lab.ts';
import { tempDir } from './helpers/tmp.ts';
import { readSnapshotMeta, restoreLabSnapshot, staleInputs } from '../harness/lab/snapshot.ts';
import { credsFromKubeconfig, kubeJson } from '../core/transport/kube-api.ts';
import { repoRoot } from '../lib/paths.ts';

const SHAPE = { name: 'w1', hosts: 1 };
let w: WiredLab;
let kc: string;

/** A copy of the source tree with kube-scheduler's --profiling flipped: one rendered flag changed. */
function changedTree(): string {
  const root = tempDir('hardwire-snapshot-src-');
  for (const d of ['cli', 'core', 'lib', 'harness'])
    cpSync(join(repoRoot, d), join(root, d), { recursive: true });
  for (const f of ['package.json', 'pnpm-lock.yaml', 'tsconfig.json'])
    cpSync(join(repoRoot, f), join(root, f));
  symlinkSync(join(repoRoot, 'node_modules'), join(root, 'node_modules'));
  const model = join(root, 'core', 'components', 'models', 'kube-scheduler.ts');
  const text = readFileSync(model, 'utf8');
  const changed = text.replace(/('profiling',\s*)false,/, '$1true,');
  expect(changed).not.toBe(text);
  writeFileSync(model, changed);
  return root;
}

beforeAll(async () => {
  w = await wiredTestLab(SHAPE.name, SHAPE.hosts);
  kc = join(w.state, SHAPE.name, 'kubeconfigs', 'admin.conf');
}, 900_000);

afterAll(async () => {
  await w?.lab.down();
});

describe('lab snapshots', () => {
  it("the lab's snapshot is current; one rendered flag changed makes another key, so the next wiredTestLab wires again, and a restore with the changed inputs is refused before any host is touched", async () => {
    const now = wiredSnapshotDir(SHAPE);
    const meta = readSnapshotMeta(now.dir);
    expect(meta, `no snapshot at ${now.dir} after wiredTestLab`).toBeDefined();
    expect(staleInputs(meta!, now.inputs)).toEqual([]);

    const root = changedTree();
    try {
      const changed = wiredSnapshotDir(SHAPE, root);
      expect(changed.dir).not.toBe(now.dir);
      expect(readSnapshotMeta(changed.dir)).toBeUndefined();
      expect(staleInputs(meta!, changed.inputs)).toEqual(['source']);
      // The changed tree really renders the flag differently (render of the copy, run from the copy).
      const r = spawnSync(
        process.execPath,
        [
          join(root, 'cli', 'hardwire.ts'),
          'render',
          '--inventory',
          w.inv,
          '--state-dir',
          join(root, 'state'),
        ],
        { encoding: 'utf8', timeout: 300_000 },
      );
      expect(r.status, r.stderr.slice(-2000)).toBe(0);
      const find = (d: string): string[] =>
        readdirSync(d, { withFileTypes: true }).flatMap((e) =>
          e.isDirectory()
            ? find(join(d, e.name))
            : e.name === 'kube-scheduler.service'
              ? [join(d, e.name)]
              : [],
        );
      const [unit] = find(join(root, 'state'));
      expect(readFileSync(unit!, 'utf8')).toContain('--profiling=true');
      // The running lab is untouched by the refused restore: same node1 boot id before and after.
      const s = await w.lab.ssh('node1');
      const boot = await remote(s, ['cat', '/proc/sys/kernel/random/boot_id']);
      await s.close();
      await expect(
        restoreLabSnapshot({
          name: SHAPE.name,
          stateDir: w.lab.stateDir,
          src: now.dir,
          inputs: changed.inputs,
        }),
      ).rejects.toThrow(/is stale: its source differ/);
      const s2 = await w.lab.ssh('node1');
      expect(await remote(s2, ['cat', '/proc/sys/kernel/random/boot_id'])).toBe(boot);
      await s2.close();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("lab save, then lab up --saved: the saved cluster comes back (a ConfigMap made after the save is gone), wire changes nothing, the CA on the host is the operator's, and the snapshot keeps keys 0600", async () => {
    const env = { HARDWIRE_STATE: w.lab.stateDir };
    const snapName = `t${process.pid}`;
    // New connections after each power cycle: node's global agent keeps sockets alive, and one to the old apiserver is dead (EPIPE).
    const admin = credsFromKubeconfig(kc);
    const cm = (name: string) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: 'default' },
      data: { at: name },
    });
    const status = async (name: string) =>
      (
        await kubeJson(admin, 'GET', `/api/v1/namespaces/default/configmaps/${name}`, {
          allow: [404],
        })
      ).status;
    expect(
      (
        await kubeJson(admin, 'POST', '/api/v1/namespaces/default/configmaps', {
          body: cm('before-save'),
        })
      ).status,
    ).toBe(201);
    const save = hardwire(
      ['lab', 'save', snapName, '--name', SHAPE.name, '--state-dir', w.state, '--json'],
      { env, timeoutMs: 600_000 },
    );
    expect(save.code, save.stderr.slice(-2000)).toBe(0);
    const saved = JSON.parse(save.stdout) as { dir: string; clusterDir: string };
    try {
      expect(saved.clusterDir).toBe(join(w.state, SHAPE.name));
      // Every private key in the snapshot stays 0600 (read with stat here, not from the code's table).
      const keys: string[] = [];
      const walk = (d: string) => {
        for (const e of readdirSync(d, { withFileTypes: true })) {
          const p = join(d, e.name);
          if (e.isDirectory()) walk(p);
          else if (e.isFile() && e.name.endsWith('.key')) keys.push(p);
        }
      };
      walk(join(saved.dir, 'cluster'));
      expect(keys.length).toBeGreaterThan(5);
      for (const k of keys) expect((statSync(k).mode & 0o777).toString(8), k).toBe('600');
      expect((statSync(saved.dir).mode & 0o777).toString(8)).toBe('700');

      globalAgent.destroy();
      expect(await status('before-save')).toBe(200);
      expect(
        (
          await kubeJson(admin, 'POST', '/api/v1/namespaces/default/configmaps', {
            body: cm('after-save'),
          })
        ).status,
      ).toBe(201);
      const up = hardwire(
        ['lab', 'up', '--saved', snapName, '--name', SHAPE.name, '--state-dir', w.state, '--json'],
        { env, timeoutMs: 600_000 },
      );
      expect(up.code, up.stderr.slice(-2000)).toBe(0);
      const r = JSON.parse(up.stdout) as {
        wired: boolean;
        changedFiles: number;
        restarted: number;
      };
      expect(r).toMatchObject({ wired: true, changedFiles: 0, restarted: 0 });
      globalAgent.destroy();
      expect(await status('before-save')).toBe(200);
      expect(await status('after-save')).toBe(404);
      // The CA the host serves with is the operator's copy, hashed on the host by sha256sum.
      const s = await w.lab.ssh('node1');
      const onHost = (await remote(s, ['sha256sum', '/etc/kubernetes/pki/ca.crt'])).split(/\s+/)[0];
      await s.close();
      expect(onHost).toBe(
        createHash('sha256')
          .update(readFileSync(join(w.state, SHAPE.name, 'pki', 'ca.crt')))
          .digest('hex'),
      );
      expect(up.stdout + up.stderr + save.stdout + save.stderr).not.toMatch(/PRIVATE KEY/);
    } finally {
      rmSync(saved.dir, { recursive: true, force: true });
    }
  });

  it("a rebuilt binary makes the snapshot stale: the recorded cache file's stat moved (a cache of this test's own)", () => {
    const cache = tempDir('hardwire-snapshot-cache-');
    const was = process.env.HARDWIRE_CACHE;
    process.env.HARDWIRE_CACHE = cache;
    try {
      const bin = join(cache, 'bin', 'etcd', 'v0', 'etcd');
      mkdirSync(join(cache, 'bin', 'etcd', 'v0'), { recursive: true });
      writeFileSync(bin, 'one');
      const st = statSync(bin);
      const recorded = {
        'bin/etcd/v0/etcd': `${st.size} ${st.ino} ${statSync(bin, { bigint: true }).mtimeNs} ${statSync(bin, { bigint: true }).ctimeNs} ${'0'.repeat(64)}`,
      };
      const meta = { inputs: { shape: 's', source: 'x', rootfs: 'r' }, binaries: recorded };
      expect(staleInputs(meta, meta.inputs)).toEqual([]);
      // Rebuilt in place with the same size: a new ctime (and a new inode when renamed into place).
      const tmp = `${bin}.new`;
      writeFileSync(tmp, 'two');
      renameSync(tmp, bin);
      expect(staleInputs(meta, meta.inputs)).toEqual(['binaries']);
      rmSync(bin);
      expect(staleInputs(meta, meta.inputs)).toEqual(['binaries']);
    } finally {
      if (was === undefined) delete process.env.HARDWIRE_CACHE;
      else process.env.HARDWIRE_CACHE = was;
      rmSync(cache, { recursive: true, force: true });
    }
  });

  it('bad input: an unknown snapshot is one line naming --saved, exit 2, and the lab keeps running', async () => {
    const s = await w.lab.ssh('node1');
    const boot = await remote(s, ['cat', '/proc/sys/kernel/random/boot_id']);
    await s.close();
    const r = hardwire(['lab', 'up', '--saved', 'no-such-snapshot', '--name', SHAPE.name], {
      env: { HARDWIRE_STATE: w.lab.stateDir },
    });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^error: --saved: no snapshot "no-such-snapshot"/);
    const s2 = await w.lab.ssh('node1');
    expect(await remote(s2, ['cat', '/proc/sys/kernel/random/boot_id'])).toBe(boot);
    await s2.close();
  });
});
