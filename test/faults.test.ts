// The fault suite, on a real wired 3-host lab: malformed inventories never reach a host, wire
// killed mid-push leaves no half-written file, a host powered off mid-roll stops the roll while the
// rest keeps serving, and SSH auth failure vs changed host key are distinct errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { generateEd25519 } from '../transport/keygen.ts';
import { hardwire } from './helpers/cli.ts';
import { testLab, type TestLab } from './helpers/lab.ts';
import { writeBadInventories } from './fixtures/bad-inventories.ts';
import { labStart, labStop } from '../lab/index.ts';
import { repoRoot } from '../lib/paths.ts';
import { loadInventory } from '../inventory/load.ts';
import { renderHostTree } from '../render/host-tree.ts';
import { citer } from '../render/citations.ts';
import { ensurePki } from '../pki/store.ts';
import { credsFromKubeconfig } from '../kube/client.ts';
import { checkApiserver } from '../gates/apiserver.ts';
import { checkEtcd, etcdctlArgv } from '../gates/etcd.ts';

let lab: TestLab;
let inv: string;
let state: string;

function variant(file: string, fn: (d: Record<string, any>) => void): string { // eslint-disable-line @typescript-eslint/no-explicit-any
  const d = parse(readFileSync(inv, 'utf8')) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  fn(d);
  const out = join(lab.stateDir, file);
  writeFileSync(out, stringify(d));
  return out;
}

function wireOk(inventory: string): { restarted: unknown[]; plan: { noop: boolean } } {
  const r = hardwire(['wire', '--inventory', inventory, '--state-dir', state, '--json'], { timeoutMs: 600_000 });
  expect(r.code, r.stderr.slice(-3000)).toBe(0);
  return JSON.parse(r.stdout);
}

/** Runs wire and calls onLine for each stderr chunk; resolves with exit code and stderr. */
function wireWatching(inventory: string, onOutput: (stderr: string, kill: () => void) => void, extra: string[] = []): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  const child = spawn(process.execPath, [join(repoRoot, 'cli', 'hardwire.ts'), 'wire', '--inventory', inventory, '--state-dir', state, ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); onOutput(stderr, () => child.kill('SIGKILL')); });
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stderr })));
}

/** Successful SSH logins per host, from sshd's own journal (this reading's login included). */
async function sshdLogins(): Promise<number[]> {
  const out: number[] = [];
  for (const h of lab.info.hosts) {
    const s = await lab.ssh(h.name);
    const r = await s.exec(['journalctl', '-u', 'ssh.service', '--no-pager', '-o', 'cat', '--grep', '^Accepted '], { allowFail: true });
    out.push(r.stdout.split('\n').filter((l) => l.startsWith('Accepted ')).length);
    await s.close();
  }
  return out;
}

beforeAll(async () => {
  lab = await testLab('faulttest', 3);
  inv = lab.info.inventory;
  state = join(lab.stateDir, 'state');
  wireOk(inv);
});

afterAll(async () => {
  await lab?.down();
});

describe('fault suite', () => {
  it('rejects 40+ malformed inventories with exit 2, one line naming the field, and no SSH connection', async () => {
    const fixtures = writeBadInventories(join(lab.stateDir, 'bad'), readFileSync(inv, 'utf8'));
    expect(fixtures.length).toBeGreaterThanOrEqual(30);
    const before = await sshdLogins();
    for (const { fx, file } of fixtures) {
      const r = hardwire(['wire', '--inventory', file, '--state-dir', state]);
      expect(r.code, fx.name).toBe(2);
      const lines = r.stderr.trim().split('\n');
      expect(lines, fx.name).toHaveLength(1);
      expect(lines[0]!.startsWith(`error: ${fx.field}`), `${fx.name}: ${lines[0]}`).toBe(true);
    }
    // The only new login on each host is this second reading's own.
    const after = await sshdLogins();
    expect(after.map((n, i) => n - before[i]!), 'sshd saw logins during the malformed runs').toEqual([1, 1, 1]);
  });

  it('wire killed mid-push leaves every file old or new, and the next wire converges', async () => {
    const a = inv;
    const b = variant('inv-b.yaml', (d) => {
      d.cluster.extraSANs = ['api.faulttest.example'];
      d.cluster.extraArgs = { 'kube-scheduler': { v: '2' }, 'kube-controller-manager': { v: '2' }, etcd: { 'log-level': 'info' } };
    });
    // Both versions of every file, from the renderer itself.
    const allowed = new Map<string, Set<string>>();
    const record = async (file: string) => {
      const i = loadInventory(file);
      const pki = await ensurePki(state, i);
      const cite = await citer(i.cluster.kubernetesVersion); // wire renders with citations too
      for (const h of i.hosts) for (const f of renderHostTree(i, h, pki.dir, cite).files) {
        const key = `${h.name}:${f.path}`;
        allowed.set(key, (allowed.get(key) ?? new Set()).add(f.sha256));
      }
    };
    await record(a);
    await record(b); // reissues the apiserver cert for the new SAN
    await record(a); // and back: the cert kept for b is reissued again, so record the final set
    const targets = [b, a, b, a];
    for (const [round, target] of targets.entries()) {
      const delay = 50 + Math.floor(Math.random() * 600);
      let armed = false;
      const r = await wireWatching(target, (stderr, kill) => {
        if (!armed && stderr.includes('==> Push files')) { armed = true; setTimeout(kill, delay); }
      });
      expect(armed, `round ${round}: never reached the push`).toBe(true);
      if (r.signal !== 'SIGKILL') continue; // the push finished first; still a valid round
      for (const h of lab.info.hosts) {
        const s = await lab.ssh(h.name);
        const paths = [...allowed.keys()].filter((k) => k.startsWith(`${h.name}:`)).map((k) => k.slice(h.name.length + 1));
        const got = await s.sha256Many(paths);
        for (const [p, sha] of got) {
          if (sha === null) continue; // not yet created is fine
          expect(allowed.get(`${h.name}:${p}`)!.has(sha), `round ${round} ${h.name}:${p} is neither old nor new`).toBe(true);
        }
        await s.close();
      }
    }
    // Files and apiserver certs moved back and forth; the last good run converges everything.
    wireOk(a);
    expect(wireOk(a).plan.noop).toBe(true);
  }, 600_000);

  it('a host powered off during a rolling restart stops the roll, names the host, and the rest keeps serving', async () => {
    const changed = variant('inv-roll.yaml', (d) => { d.cluster.extraArgs = { 'kube-apiserver': { v: '1' } }; });
    let stopped = false;
    const r = await wireWatching(changed, (stderr) => {
      if (!stopped && stderr.includes('[node1] systemctl restart kube-apiserver.service')) {
        stopped = true;
        void labStop('node2', { name: lab.name, stateDir: lab.stateDir });
      }
    }, ['--gate-timeout', '30']);
    expect(stopped).toBe(true);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/error: \[node2\] /);
    expect(r.stderr).not.toMatch(/\[node3\] systemctl restart kube-apiserver/);
    const i = loadInventory(changed);
    const creds = credsFromKubeconfig(join(state, i.cluster.name, 'kubeconfigs', 'admin.conf'));
    await checkApiserver(creds, i.hosts[0]!.address);
    await checkApiserver(creds, i.hosts[2]!.address);
    const s = await lab.ssh('node1');
    await expect(checkEtcd(i, s)).rejects.toThrow(/unhealthy: .*10\.213\.\d+\.12/); // quorum of 2 serves; the third is down
    const put = etcdctlArgv(i, 'put', '/hardwire/probe', 'ok').map((a) => (a.startsWith('--endpoints=') ? `--endpoints=https://${i.hosts[0]!.address}:2379` : a));
    expect((await s.exec(put)).stdout.trim()).toBe('OK');
    await s.close();
    await labStart('node2', { name: lab.name, stateDir: lab.stateDir });
    wireOk(changed);
    expect(wireOk(changed).plan.noop).toBe(true);
  }, 600_000);

  it('SSH auth failure and a changed host key are clear, distinct errors', () => {
    const { private: priv } = generateEd25519();
    const keyFile = join(lab.stateDir, 'stranger_ed25519');
    writeFileSync(keyFile, priv, { mode: 0o600 });
    const auth = hardwire(['wire', '--inventory', variant('inv-auth.yaml', (d) => { d.hosts[1].ssh.identityFile = keyFile; }), '--state-dir', state]);
    expect(auth.code).toBe(1);
    expect(auth.stderr).toMatch(/error: \[node2\] ssh-auth: /);

    const kh = readFileSync(lab.info.knownHosts, 'utf8').trim().split('\n');
    const line = (n: string) => kh.find((l) => l.split(' ')[0]!.split(',').includes(n))!;
    const swapped = join(lab.stateDir, 'known_hosts.swapped');
    writeFileSync(swapped, `${[line('node1'), line('node3').replace(/^\S+/, line('node2').split(' ')[0]!), line('node3')].join('\n')}\n`);
    const changed = hardwire(['wire', '--inventory', variant('inv-hk.yaml', (d) => { d.knownHosts = swapped; }), '--state-dir', state, '--accept-new-host-keys']);
    expect(changed.code).toBe(1);
    expect(changed.stderr).toMatch(/error: \[node2\] ssh-host-key-changed: .*CHANGED/);
    expect(changed.stderr).not.toBe(auth.stderr);
  });
});
