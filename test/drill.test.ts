// Drill 3.C5 end to end on a real wired 2-host lab, for all five targets: kubeconfig client certs
// (the scheduler in a 60 s window, the controller-manager), the TLS client cert toward etcd
// (apiserver-etcd-client), the apiserver's serving cert and an etcd peer cert. Each run must capture
// a real x509 line from a journal, recover with every gate green, and leave the CA untouched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadInventory } from '../core/inventory/load.ts';
import { hardwire } from './helpers/cli.ts';
import { wiredTestLab, type TestLab } from './helpers/lab.ts';
import { hashesOnHosts, inJournal as inJournalOn } from './helpers/journal.ts';
import { verifyGreen } from './helpers/verify.ts';

let lab: TestLab;
let inv: string;
let state: string;

interface Captured {
  host: string;
  unit: string;
  at: string;
  line: string;
}
interface Report {
  target: string;
  mode: string;
  baseline: { gates: { ok: boolean }[]; leases: Record<string, { renewTime: string }> };
  captured: Captured[];
  symptom: { kind: string; detail: string; at: string } | null;
  checkAfterBreak: { host: string; status: string }[];
  recovery: { step: string; why: string; at: string }[];
  recovered: boolean;
  finalGates: { name: string; ok: boolean }[];
  caFingerprint: { before: string; after: string; unchanged: boolean };
  timeToDetectMs: number | null;
  timeToRecoverMs: number;
}

function drill(args: string[], md: string): Report {
  const r = hardwire(
    [
      'drill',
      'cert-expiry',
      '--inventory',
      inv,
      '--state-dir',
      state,
      '--json',
      '--md',
      md,
      ...args,
    ],
    { timeoutMs: 600_000 },
  );
  expect(r.code, r.stderr.slice(-4000)).toBe(0);
  return JSON.parse(r.stdout) as Report;
}

const inJournal = (c: Captured) => inJournalOn(lab, c);

/**
 * The CA files' sha256: on every host (found with find, hashed with sha256sum over SSH) and the
 * operator's copies here. Not the drill's caFingerprint, which is its own report.
 */
async function caHashes(): Promise<Record<string, string>> {
  const caFile = (n: string) =>
    n === 'ca.crt' || n === 'ca.key' || /^front-proxy-ca\.(crt|key)$/.test(n);
  const hosts = lab.info.hosts.map((h) => h.name);
  const out = await hashesOnHosts(lab, hosts, [
    '/etc/kubernetes/pki',
    '-type',
    'f',
    '(',
    '-name',
    'ca.crt',
    '-o',
    '-name',
    'ca.key',
    '-o',
    '-name',
    'front-proxy-ca.*',
    ')',
  ]);
  for (const h of hosts)
    for (const f of ['ca.crt', 'ca.key', 'etcd/ca.crt'])
      expect(out[`${h}:/etc/kubernetes/pki/${f}`], `${h} has ${f}`).toBeDefined();
  const pki = join(state, loadInventory(inv).cluster.name, 'pki');
  for (const e of readdirSync(pki, { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || !caFile(e.name)) continue;
    const p = join(e.parentPath, e.name);
    out[`operator:${p}`] = createHash('sha256').update(readFileSync(p)).digest('hex');
  }
  expect(
    Object.keys(out).filter((k) => k.startsWith('operator:')).length,
    'operator CA files',
  ).toBeGreaterThanOrEqual(6);
  return out;
}

/** The drill's own gate list must be the gates verify runs, all ok; then verify, in its own process, must pass. */
function gatesGreen(gates: { name: string; ok: boolean }[], label: string): void {
  const v = verifyGreen(inv, state, `verify after ${label}`);
  expect(
    gates.map((g) => g.name).sort(),
    `${label}: the drill's final gates are verify's gates`,
  ).toEqual(v.gates.map((g) => g.name).sort());
  expect(
    gates.filter((g) => !g.ok),
    label,
  ).toEqual([]);
}

function noKeyMaterial(text: string): void {
  expect(text).not.toMatch(/PRIVATE KEY|client-key-data/);
}

beforeAll(async () => {
  ({ lab, inv, state } = await wiredTestLab('w2', 2));
});

afterAll(async () => {
  await lab?.down();
});

describe('drill cert-expiry on a wired 2-host lab', () => {
  it('rejects bad input with one line and exit 2, touching nothing', () => {
    const a = hardwire([
      'drill',
      'cert-expiry',
      '--target',
      'kubelet',
      '--inventory',
      inv,
      '--state-dir',
      state,
    ]);
    expect(a.code).toBe(2);
    expect(a.stderr.trim().split('\n')).toHaveLength(1);
    expect(a.stderr).toMatch(/--target: "kubelet" is not one of kube-scheduler/);
    const b = hardwire([
      'drill',
      'cert-expiry',
      '--mode',
      'expired',
      '--window',
      '30',
      '--inventory',
      inv,
      '--state-dir',
      state,
    ]);
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/--window: only applies to --mode window/);
    expect(hardwire(['drill', 'nope', '--inventory', inv]).code).toBe(2);
    const help = hardwire(['drill', '--help']).stdout;
    expect(help).toMatch(/^usage: hardwire drill list/);
    expect(help).toMatch(/^ {7}hardwire drill cert-expiry \[--target TARGET\]/m);
  });

  it('kube-scheduler, 60 s window: the apiserver journal shows the x509 rejection, the Lease stops, recovery renews it', async () => {
    const md = join(state, 'drill-scheduler.md');
    const ca = await caHashes();
    const r = drill(['--target', 'kube-scheduler', '--mode', 'window', '--window', '60'], md);
    expect(r.baseline.gates.length).toBeGreaterThan(0);
    expect(r.baseline.gates.filter((g) => !g.ok)).toEqual([]);
    const x509 = r.captured.filter((c) => c.unit === 'kube-apiserver.service');
    expect(x509.length).toBeGreaterThan(0);
    for (const c of x509) {
      expect(c.line).toMatch(/x509: certificate has expired or is not yet valid/);
      expect(await inJournal(c), `${c.host} ${c.unit} ${c.at}`).toBe(true);
    }
    expect(r.symptom?.kind).toBe('lease-not-renewing');
    expect(r.checkAfterBreak.map((c) => c.status)).toEqual(['EXPIRED', 'EXPIRED']);
    expect(r.recovered).toBe(true);
    expect(await caHashes(), "CA files on the hosts and the operator's").toEqual(ca);
    gatesGreen(r.finalGates, 'kube-scheduler');
    expect(r.caFingerprint.unchanged).toBe(true);
    expect(r.caFingerprint.after).toBe(r.caFingerprint.before);
    expect(r.timeToDetectMs).not.toBeNull();
    expect(existsSync(md)).toBe(true);
    const text = readFileSync(md, 'utf8');
    expect(text).toContain('x509: certificate has expired or is not yet valid');
    noKeyMaterial(text);
    noKeyMaterial(JSON.stringify(r));
    console.log(
      `drill kube-scheduler (window 60 s): detect ${r.timeToDetectMs} ms, recover ${r.timeToRecoverMs} ms; first line: ${x509[0]!.host} ${x509[0]!.at} ${x509[0]!.line.slice(0, 200)}`,
    );
  }, 480_000);

  it('apiserver-etcd-client, already expired: etcd logs the rejected handshake, /readyz fails, recovery rolls the apiservers', async () => {
    const md = join(state, 'drill-etcd-client.md');
    const ca = await caHashes();
    const r = drill(['--target', 'apiserver-etcd-client', '--mode', 'expired'], md);
    const x509 = r.captured.filter((c) => c.unit === 'etcd.service');
    expect(x509.length).toBeGreaterThan(0);
    for (const c of x509) {
      expect(c.line).toMatch(
        /rejected connection.*x509: certificate has expired or is not yet valid/,
      );
      expect(await inJournal(c), `${c.host} ${c.unit} ${c.at}`).toBe(true);
    }
    expect(r.symptom?.kind).toBe('readyz-etcd-failing');
    expect(r.checkAfterBreak.length).toBeGreaterThan(0);
    expect(r.checkAfterBreak.filter((c) => c.status !== 'EXPIRED')).toEqual([]);
    expect(r.recovered).toBe(true);
    expect(await caHashes(), "CA files on the hosts and the operator's").toEqual(ca);
    expect(r.caFingerprint.unchanged).toBe(true);
    expect(r.recovery[0]!.step).toMatch(/^renew apiserver-etcd-client/);
    // A running apiserver is restarted one host at a time; one that is down (it exits when it cannot
    // reach storage) is started, as wire does for any unit that is not active, or restarted at once
    // when systemd is between two of its attempts (activating), so it does not wait out RestartSec.
    const apiserver = r.recovery
      .filter((s) => /systemctl (re)?start kube-apiserver/.test(s.step))
      .map((s) =>
        s.step.replace(/ systemctl (re)?start /, ' ').replace(/ \(it was activating\)$/, ''),
      );
    expect(apiserver.sort()).toEqual([
      '[node1] kube-apiserver.service',
      '[node2] kube-apiserver.service',
    ]);
    noKeyMaterial(readFileSync(md, 'utf8'));
    console.log(
      `drill apiserver-etcd-client (expired): detect ${r.timeToDetectMs} ms, recover ${r.timeToRecoverMs} ms; first line: ${x509[0]!.host} ${x509[0]!.at} ${x509[0]!.line.slice(0, 300)}`,
    );
    gatesGreen(r.finalGates, 'apiserver-etcd-client');
  }, 600_000);

  it('etcd-peer, already expired: the other member rejects the peer, then the member rejoins (the broken etcd must not block its start)', async () => {
    const ca = await caHashes();
    const r = drill(
      ['--target', 'etcd-peer', '--mode', 'expired'],
      join(state, 'drill-etcd-peer.md'),
    );
    const x509 = r.captured.filter((c) => c.unit === 'etcd.service');
    expect(x509.length).toBeGreaterThan(0);
    for (const c of x509) {
      expect(c.line).toMatch(
        /rejected connection on peer endpoint.*x509: certificate has expired or is not yet valid/,
      );
      expect(await inJournal(c), `${c.host} ${c.unit} ${c.at}`).toBe(true);
    }
    // Only the first etcd host's peer cert is broken; the rejection is logged by the other member.
    expect(new Set(x509.map((c) => c.host))).toEqual(new Set(['node2']));
    expect(r.symptom?.kind).toBe('etcd-unhealthy');
    expect(Object.fromEntries(r.checkAfterBreak.map((c) => [c.host, c.status]))).toEqual({
      node1: 'EXPIRED',
      node2: 'ok',
    });
    expect(r.recovered).toBe(true);
    expect(await caHashes(), "CA files on the hosts and the operator's").toEqual(ca);
    gatesGreen(r.finalGates, 'etcd-peer');
    expect(r.caFingerprint.unchanged).toBe(true);
    console.log(
      `drill etcd-peer (expired): detect ${r.timeToDetectMs} ms, recover ${r.timeToRecoverMs} ms; first line: ${x509[0]!.host} ${x509[0]!.at} ${x509[0]!.line.slice(0, 300)}`,
    );
  }, 600_000);

  it('kube-controller-manager and the apiserver serving cert, already expired: the real x509 line from the journal that logs it, then recovery', async () => {
    for (const t of [
      {
        target: 'kube-controller-manager',
        unit: 'kube-apiserver.service',
        symptom: 'lease-not-renewing',
      },
      // Clients verify the serving cert: the scheduler or controller-manager logs the x509 error.
      {
        target: 'apiserver',
        unit: /^kube-(scheduler|controller-manager)\.service$/,
        symptom: 'apiserver-tls-rejected',
      },
    ]) {
      const ca = await caHashes();
      const r = drill(
        ['--target', t.target, '--mode', 'expired'],
        join(state, `drill-${t.target}.md`),
      );
      const x509 = r.captured.filter((c) =>
        typeof t.unit === 'string' ? c.unit === t.unit : t.unit.test(c.unit),
      );
      expect(x509.length, t.target).toBeGreaterThan(0);
      for (const c of x509) {
        expect(c.line).toMatch(/x509: certificate has expired or is not yet valid/);
        expect(await inJournal(c), `${c.host} ${c.unit} ${c.at}`).toBe(true);
      }
      expect(r.symptom?.kind).toBe(t.symptom);
      expect(r.recovered, t.target).toBe(true);
      expect(await caHashes(), `${t.target}: CA files on the hosts and the operator's`).toEqual(ca);
      gatesGreen(r.finalGates, t.target);
      expect(r.caFingerprint.unchanged).toBe(true);
      console.log(
        `drill ${t.target} (expired): detect ${r.timeToDetectMs} ms, recover ${r.timeToRecoverMs} ms; first line: ${x509[0]!.host} ${x509[0]!.unit} ${x509[0]!.line.slice(0, 200)}`,
      );
    }
  }, 900_000);
});
