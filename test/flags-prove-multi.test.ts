// `hardwire flags prove` on a wired 3-host lab (issue 25): every host runs kube-scheduler, and prove
// stops node2's and node3's for the proof so that the Lease goes to node1's traced instance, then
// starts them again. Read independently of prove: a `kubectl get lease -w` of the test's own,
// running through the proof, sees the traced instance hold the Lease; systemctl on each host
// shows every unit active again afterwards, node2's and node3's with new processes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hardwire } from './helpers/cli.ts';
import { remote, wiredTestLab, type WiredLab } from './helpers/lab.ts';
import { loadInventory } from '../core/inventory/load.ts';
import { kubectlPath } from '../core/components/binaries/cache.ts';
import type { ProveReport } from '../harness/prove/index.ts';

const UNIT = 'kube-scheduler.service';
let w: WiredLab;

beforeAll(async () => {
  w = await wiredTestLab('w3', 3);
});

afterAll(async () => {
  await w?.lab.down();
});

/** Each host's unit: is-active and MainPID, read with systemctl on the host. */
async function units(): Promise<Record<string, { active: string; pid: string }>> {
  const out: Record<string, { active: string; pid: string }> = {};
  for (const h of w.lab.info.hosts) {
    const s = await w.lab.ssh(h.name);
    try {
      out[h.name] = {
        active: await remote(s, ['systemctl', 'is-active', UNIT]),
        pid: await remote(s, ['systemctl', 'show', '-p', 'MainPID', '--value', UNIT]),
      };
    } finally {
      await s.close();
    }
  }
  return out;
}

describe('flags prove kube-scheduler on a 3-host lab', () => {
  it("stops the other hosts' schedulers through the Wet gate, the traced instance on node1 holds the Lease, and all run again after", async () => {
    const before = await units();
    expect(Object.values(before).map((u) => u.active)).toEqual(['active', 'active', 'active']);
    // The test's own watch of the Lease's holder, a process of its own writing to a file while prove runs.
    const admin = join(w.state, loadInventory(w.inv).cluster.name, 'kubeconfigs', 'admin.conf');
    const file = join(w.lab.stateDir, 'lease-watch.txt');
    const fd = openSync(file, 'w');
    const watch = spawn(
      kubectlPath(),
      [
        '--kubeconfig',
        admin,
        '-n',
        'kube-system',
        'get',
        'lease',
        'kube-scheduler',
        '-w',
        '-o',
        'jsonpath={.spec.holderIdentity}{"\\n"}',
      ],
      { stdio: ['ignore', fd, fd] },
    );
    let r: ReturnType<typeof hardwire>;
    try {
      await new Promise((res) => setTimeout(res, 2000));
      r = hardwire(
        [
          'flags',
          'prove',
          '--component',
          'kube-scheduler',
          '--inventory',
          w.inv,
          '--state-dir',
          w.state,
          '--json',
          '--gate-timeout',
          '60',
        ],
        { timeoutMs: 600_000 },
      );
      await new Promise((res) => setTimeout(res, 2000));
    } finally {
      watch.kill();
      closeSync(fd);
    }
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    const report = JSON.parse(r.stdout) as ProveReport;
    expect(report.host).toBe('node1');
    expect(report.holder).toMatch(/^node1_/);
    expect(report.counts.hit).toBe(report.counts.flags);
    // The Lease was held by the traced instance (its holder is none of the units' before), as the test's own watch saw.
    const seen = readFileSync(file, 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    expect(seen, "the test's lease watch").toContain(report.holder);
    // Each other host's stop and start went through the Wet gate (its "[host] …" intent line), in that order.
    for (const h of ['node2', 'node3']) {
      const stop = r.stderr.indexOf(`[${h}] stop ${UNIT} for the proof`);
      const start = r.stderr.indexOf(`[${h}] start ${UNIT} again after the proof`);
      expect(stop, `${h} stop`).toBeGreaterThan(-1);
      expect(start, `${h} start`).toBeGreaterThan(stop);
    }
    // All three run again, the other two as new processes (stopped and started), node1's unit too.
    const after = await units();
    for (const h of ['node1', 'node2', 'node3']) {
      expect(after[h]!.active, h).toBe('active');
      expect(after[h]!.pid, h).not.toBe(before[h]!.pid);
    }
  }, 300_000);
});
