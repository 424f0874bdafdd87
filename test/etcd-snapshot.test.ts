// No data lost by our own hand: snapshot before etcd changes, restore after destroying the data,
// and rollback of a wire run from its on-host backups. On a real wired lab.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { hardwire } from './helpers/cli.ts';
import { wiredTestLab, remote, type TestLab } from './helpers/lab.ts';
import { expectRolled, unitClocks } from './helpers/units.ts';
import {
  credsFromKubeconfig,
  kubeJson,
  kubeRequest,
  type KubeCreds,
} from '../core/transport/kube-api.ts';
import { loadInventory } from '../core/inventory/load.ts';
import { binaryPath } from '../core/components/binaries/cache.ts';
import { versionsFor } from '../core/components/binaries/catalog.ts';

let lab: TestLab;
let inv: string;
let state: string;
let creds: KubeCreds;

function run(args: string[]): { code: number; stdout: string; stderr: string } {
  return hardwire([...args, '--inventory', inv, '--state-dir', state], { timeoutMs: 600_000 });
}

function withArgs(file: string, extra: Record<string, Record<string, string>>): string {
  const d = parse(readFileSync(inv, 'utf8')) as { cluster: Record<string, unknown> };
  d.cluster.extraArgs = extra;
  const out = join(lab.stateDir, file);
  writeFileSync(out, stringify(d));
  return out;
}

const cm = (name: string) =>
  kubeRequest(creds, 'GET', `/api/v1/namespaces/default/configmaps/${name}`).then((r) => r.status);

/** etcdutl from the binary cache at the version the cluster runs (the cache holds the upgrade's too), run by the test itself. */
function etcdutl(args: string[]): string {
  return execFileSync(binaryPath('etcdutl', versionsFor().etcd), args, { encoding: 'utf8' });
}

/** systemd timestamp properties of a unit on a host, in ms since the epoch (microsecond precision). */
async function unitTimes(host: string, unit: string, props: string[]): Promise<number[]> {
  const s = await lab.ssh(host);
  const out = await remote(s, [
    'systemctl',
    'show',
    unit,
    ...props.map((p) => `--property=${p}`),
    '--timestamp=us+utc',
  ]);
  await s.close();
  const got = new Map(
    out.split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  return props.map((p) => {
    const m = /^\w+ (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)\.(\d{6}) UTC$/.exec(got.get(p) ?? '');
    if (!m) throw new Error(`${host} ${unit} ${p}: unexpected "${got.get(p)}"`);
    return Date.parse(`${m[1]}T${m[2]}Z`) + Number(m[3]) / 1000;
  });
}

interface Put {
  sent: number;
  acked: number;
  revision: number;
}

// A probe on node1 that writes one key to etcd every 200 ms and logs, for each acknowledged put, the
// host's clock before sending, after the ack, and the revision etcd gave it: a map from etcd
// revisions to wall-clock time that hardwire has no part in.
const PROBE_LOG = '/root/etcd-probe.log';
async function startProbe(): Promise<void> {
  const ctl = [
    '/usr/local/bin/etcdctl',
    `--endpoints=${lab.info.hosts.map((h) => `https://${h.address}:2379`).join(',')}`,
    '--cacert=/etc/kubernetes/pki/etcd/ca.crt',
    '--cert=/etc/kubernetes/pki/etcd/healthcheck-client.crt',
    '--key=/etc/kubernetes/pki/etcd/healthcheck-client.key',
    '--dial-timeout=1s',
    '--command-timeout=2s',
  ].join(' ');
  const loop = `rm -f ${PROBE_LOG}; while :; do t=$(date +%s%N); out=$(${ctl} put /hardwire-test/probe "$t" -w json 2>/dev/null) && echo "$t $(date +%s%N) $out" >> ${PROBE_LOG}; sleep 0.2; done`;
  const s = await lab.ssh('node1');
  await s.exec([
    'systemd-run',
    '--unit=hardwire-test-probe',
    '--collect',
    '--quiet',
    'sh',
    '-c',
    loop,
  ]);
  await s.close();
}

async function stopProbe(): Promise<Put[]> {
  const s = await lab.ssh('node1');
  await s.exec(['systemctl', 'stop', 'hardwire-test-probe'], { allowFail: true });
  const log = await remote(s, ['cat', PROBE_LOG]);
  await s.close();
  return log
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [sent, acked] = l.split(' ').map(Number);
      return {
        sent: sent! / 1e6,
        acked: acked! / 1e6,
        revision: Number(/"revision":(\d+)/.exec(l)![1]),
      };
    });
}

beforeAll(async () => {
  // The shared 3-host wired lab, restored from its snapshot (else wired here and saved).
  ({ lab, inv, state } = await wiredTestLab('w3', 3));
  creds = credsFromKubeconfig(
    join(state, loadInventory(inv).cluster.name, 'kubeconfigs', 'admin.conf'),
  );
});

afterAll(async () => {
  await lab?.down();
});

describe('etcd snapshots, restore and rollback', () => {
  it('wire snapshots etcd (verified) before it restarts etcd: the order, read from the hosts', async () => {
    const changed = withArgs('inv-etcd.yaml', { etcd: { 'log-level': 'info' } });
    await startProbe();
    const wireStart = Date.now();
    const r = hardwire(['wire', '--inventory', changed, '--state-dir', state, '--json'], {
      timeoutMs: 600_000,
    });
    const puts = await stopProbe();
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const doc = JSON.parse(r.stdout) as {
      snapshot: { file: string; revision: number; totalKey: number; from: string } | null;
      restarted: { unit: string }[];
    };
    expect(doc.restarted.filter((x) => x.unit === 'etcd.service')).toHaveLength(3);
    expect(doc.snapshot).not.toBeNull();
    expect(existsSync(doc.snapshot!.file)).toBe(true);

    // The saved file, read by etcdutl here: a sound snapshot, and the revision the report names.
    const status = JSON.parse(
      etcdutl(['snapshot', 'status', doc.snapshot!.file, '-w', 'json']),
    ) as { revision: number; totalKey: number };
    expect(status.revision).toBe(doc.snapshot!.revision);
    expect(status.totalKey).toBeGreaterThan(10);
    const saved = statSync(doc.snapshot!.file).mtimeMs;

    // Every member really restarted in this run; the first one went down at firstStop.
    const etcdHosts = lab.info.hosts.map((h) => h.name);
    const times = await Promise.all(
      etcdHosts.map((h) =>
        unitTimes(h, 'etcd.service', ['ActiveEnterTimestamp', 'ActiveExitTimestamp']),
      ),
    );
    const entered = times.map(([enter]) => enter!);
    const exited = times.map(([, exit]) => exit!);
    for (const [i, t] of entered.entries())
      expect(t, `${etcdHosts[i]} etcd not restarted by this wire`).toBeGreaterThan(wireStart);
    const firstStop = Math.min(...exited);
    expect(firstStop).toBeGreaterThan(wireStart);

    // The snapshot's point in time lies after the last probe put it contains (revision <= its revision)
    // was sent, and before the first put it lacks was acknowledged. That put, and the file itself,
    // came before the first etcd member went down.
    const inSnap = puts.filter((p) => p.revision <= status.revision);
    const after = puts.filter((p) => p.revision > status.revision);
    expect(inSnap.length, 'no probe put before the snapshot').toBeGreaterThan(0);
    expect(after.length, 'no probe put after the snapshot').toBeGreaterThan(0);
    const lower = inSnap.at(-1)!.sent;
    const upper = after[0]!.acked;
    const iso = (t: number) => new Date(t).toISOString();
    console.log(
      `snapshot revision ${status.revision}: taken between ${iso(lower)} and ${iso(upper)}, copied ${iso(saved)}; first etcd stop ${iso(firstStop)}, restarts active ${entered.map(iso).join(', ')}`,
    );
    expect(lower).toBeGreaterThan(wireStart);
    expect(upper, 'the snapshot was taken after etcd went down').toBeLessThan(firstStop);
    expect(saved, 'the snapshot was copied after etcd went down').toBeLessThan(firstStop);
    expect(saved).toBeLessThan(Math.min(...entered));
  }, 600_000);

  it('save, destroy the data, restore: data from before the snapshot is back, data after it is gone', async () => {
    await kubeJson(creds, 'POST', '/api/v1/namespaces/default/configmaps', {
      body: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'before-snapshot' },
        data: { v: '1' },
      },
    });
    const save = run(['etcd', 'snapshot', 'save', '--json']);
    expect(save.code, save.stderr).toBe(0);
    const file = (JSON.parse(save.stdout) as { file: string }).file;
    await kubeJson(creds, 'POST', '/api/v1/namespaces/default/configmaps', {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-snapshot' } },
    });
    // Destroy: stop everything and delete every member's data. The apiservers and controllers go
    // first on every host, while etcd still has quorum: stopped host by host, the last host, its etcd
    // peers gone, took 90 s (systemd's stop timeout) where the others took 10 s.
    const sessions = await Promise.all(lab.info.hosts.map((h) => lab.ssh(h.name)));
    await Promise.all(
      sessions.map((s) =>
        s.exec(
          ['systemctl', 'stop', 'kube-scheduler', 'kube-controller-manager', 'kube-apiserver'],
          { timeoutMs: 180_000 },
        ),
      ),
    );
    await Promise.all(
      sessions.map((s) => s.exec(['systemctl', 'stop', 'etcd'], { timeoutMs: 180_000 })),
    );
    for (const s of sessions) {
      await s.exec(['rm', '-rf', '/var/lib/etcd']);
      await s.close();
    }
    const restore = run(['etcd', 'snapshot', 'restore', file, '--json']);
    expect(restore.code, restore.stderr.slice(-2000)).toBe(0);
    expect(await cm('before-snapshot')).toBe(200);
    expect(await cm('after-snapshot')).toBe(404);
    const v = run(['verify']);
    expect(v.code, v.stderr.slice(-2000)).toBe(0);
  }, 600_000);

  it('rollback <run-id> restores the files a run overwrote and restarts what reads them', async () => {
    const v2 = withArgs('inv-v2.yaml', {
      etcd: { 'log-level': 'info' },
      'kube-scheduler': { v: '2' },
    });
    const a = hardwire(['wire', '--inventory', v2, '--state-dir', state, '--json'], {
      timeoutMs: 600_000,
    });
    expect(a.code, a.stderr.slice(-2000)).toBe(0);
    const runId = (JSON.parse(a.stdout) as { runId: string; backups: { runId: string } | null })
      .backups!.runId;
    const s = await lab.ssh('node2');
    expect(
      await remote(s, ['grep', '-c', '^  --v=2', '/etc/systemd/system/kube-scheduler.service']),
    ).toBe('1');
    const hosts = lab.info.hosts.map((h) => h.name);
    const units = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'].map(
      (c) => `${c}.service`,
    );
    const clocks = await unitClocks(lab, hosts, units);
    const rb = hardwire(['rollback', runId, '--inventory', v2, '--state-dir', state, '--json'], {
      timeoutMs: 600_000,
    });
    expect(rb.code, rb.stderr.slice(-2000)).toBe(0);
    const doc = JSON.parse(rb.stdout) as { restarted: { host: string; unit: string }[] };
    const order = hosts.map((h) => `${h}/kube-scheduler.service`);
    expect(doc.restarted.map((r) => `${r.host}/${r.unit}`)).toEqual(order);
    // As systemd saw it on the hosts: one scheduler at a time, in that order, and nothing else restarted.
    await expectRolled(lab, clocks, await unitClocks(lab, hosts, units), order);
    expect(
      await remote(s, ['grep', '-c', '^  --v=2', '/etc/systemd/system/kube-scheduler.service']),
    ).toBe('0');
    await s.close();
    // The operator state still says v=2: the next wire applies it again, and nothing else.
    const again = hardwire(['wire', '--inventory', v2, '--state-dir', state, '--json'], {
      timeoutMs: 600_000,
    });
    // Its error line first if it failed (CI at 30c7176 saw only "Unexpected end of JSON input" here).
    expect(again.code, again.stderr.slice(-2000)).toBe(0);
    expect(
      (JSON.parse(again.stdout) as { restarted: { unit: string }[] }).restarted.map((r) => r.unit),
    ).toEqual(['kube-scheduler.service', 'kube-scheduler.service', 'kube-scheduler.service']);
  }, 600_000);
});
