// The runner drills on ONE wired 2-host lab: the certificate mistakes (wrong-san kept broken and
// recovered with the printed command; unknown-ca and wrong-client-cert held broken while this test
// reproduces the symptom with kubectl itself), 3.C4 apiserver-down and kill-one. Evidence is read
// independently of the report: the captured line in that unit's journal, kubectl during the break,
// ca.crt hashed on each host with sha256sum, NRestarts from systemctl, `hardwire verify` after.
import { UNREACHABLE } from '../harness/drills/apiserver-down.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hardwire } from './helpers/cli.ts';
import { hardwireAsync } from './helpers/cli-async.ts';
import { wiredTestLab, type TestLab } from './helpers/lab.ts';
import { inJournal, onHost } from './helpers/journal.ts';
import { kubectlPath } from '../harness/drills/kubectl.ts';

let lab: TestLab;
let inv: string;
let state: string;
let admin: string;
const addr: Record<string, string> = {};
const tmp = mkdtempSync(join(tmpdir(), 'hardwire-dm-'));

interface Line {
  host: string;
  unit: string;
  at: string;
  line: string;
  traces: { citation: string }[];
}
interface Report {
  captured: Line[];
  also: { label: string; lines: Line[] }[];
  symptom: { command: string; code: number; output: string } | null;
  blastRadius: { what: string; ok: boolean; detail: string }[];
  details: Record<string, unknown>;
  keptBroken?: { recoveryCommand: string };
  recovered: boolean;
  caUnchanged: boolean | null;
  timeToDetectMs: number | null;
  timeToRecoverMs: number | null;
}

const common = () => ['--inventory', inv, '--state-dir', state, '--json'];

function kubectl(args: string[], kubeconfig = admin): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      kubectlPath(),
      ['--kubeconfig', kubeconfig, '--request-timeout=5s', ...args],
      { timeout: 30_000 },
      (err, stdout, stderr) => {
        resolve({
          code: err ? (typeof err.code === 'number' ? err.code : -1) : 0,
          out: `${stdout}${stderr}`,
        });
      },
    );
  });
}

/** kubectl with a kubeconfig as it is on the host right now (re-read each time: the drill swaps it). */
async function kubectlHostConf(
  host: string,
  path: string,
  args: string[],
): Promise<{ code: number; out: string }> {
  const file = join(tmp, 'host.conf');
  writeFileSync(file, await onHost(lab, host, ['cat', path]), { mode: 0o600 });
  try {
    return await kubectl(['--server', `https://${addr[host]}:6443`, ...args], file);
  } finally {
    rmSync(file, { force: true });
  }
}

const caHashes = async () =>
  Object.fromEntries(
    await Promise.all(
      ['node1', 'node2'].map(
        async (h) =>
          [
            h,
            (await onHost(lab, h, ['sha256sum', '/etc/kubernetes/pki/ca.crt'])).split(' ')[0],
          ] as const,
      ),
    ),
  );
const nRestarts = async (host: string, unit: string) =>
  Number(
    (await onHost(lab, host, ['systemctl', 'show', unit, '-p', 'NRestarts', '--value'])).trim(),
  );

/** Runs the drill in a child process while `probe` runs every second; returns the report and the probe's results. */
async function drillWhile<T>(
  args: string[],
  probe: () => Promise<T>,
): Promise<{ r: Report; seen: T[]; stderr: string }> {
  let done = false;
  const child = hardwireAsync(['drill', ...args, ...common()], { timeoutMs: 900_000 }).finally(
    () => {
      done = true;
    },
  );
  const seen: T[] = [];
  while (!done) {
    seen.push(await probe());
    await new Promise((r) => setTimeout(r, 1000));
  }
  const res = await child;
  expect(res.code, res.stderr.slice(-3000)).toBe(0);
  expect(res.stdout).not.toMatch(/PRIVATE KEY|client-key-data/);
  return { r: JSON.parse(res.stdout) as Report, seen, stderr: res.stderr };
}

async function allInJournal(lines: Line[]): Promise<void> {
  expect(lines.length).toBeGreaterThan(0);
  for (const c of lines)
    expect(await inJournal(lab, c), `${c.host} ${c.unit} ${c.at}: ${c.line.slice(0, 200)}`).toBe(
      true,
    );
}

function verify(): void {
  const v = hardwire(['verify', '--inventory', inv, '--state-dir', state, '--json'], {
    timeoutMs: 300_000,
  });
  expect(v.code, v.stderr.slice(-2000)).toBe(0);
}

const t0 = Date.now();
beforeAll(async () => {
  ({ lab, inv, state } = await wiredTestLab('w2', 2));
  admin = hardwire(['kubeconfig', '--inventory', inv, '--state-dir', state]).stdout.trim();
  for (const h of lab.info.hosts) addr[h.name] = h.address;
}, 900_000);

afterAll(async () => {
  await lab?.down();
  rmSync(tmp, { recursive: true, force: true });
  console.log(`drill-mistakes: ${((Date.now() - t0) / 1000).toFixed(0)} s in all`);
});

describe('runner drills on one wired 2-host lab', () => {
  it('bad input: one line naming the field, exit 2, nothing changed on the hosts', async () => {
    const ca = await caHashes();
    const started = await onHost(lab, 'node1', [
      'systemctl',
      'show',
      'kube-apiserver',
      '-p',
      'ExecMainStartTimestamp',
      '--value',
    ]);
    for (const [args, re] of [
      [
        ['cert-mistake', '--kind', 'nope'],
        /^error: --kind: "nope" is not one of wrong-san, unknown-ca, wrong-client-cert$/,
      ],
      [['cert-mistake'], /--kind: is required/],
      [
        ['kill-one', '--host', 'node9'],
        /--host: "node9" is not a control-plane host of this inventory; use one of node1, node2/,
      ],
      [
        ['apiserver-down', '--keep-broken', '--hold', '5'],
        /--hold: does nothing with --keep-broken/,
      ],
    ] as const) {
      const r = hardwire(['drill', ...args, ...common()]);
      expect(r.code, r.stderr).toBe(2);
      expect(
        r.stderr
          .trim()
          .split('\n')
          .filter((l) => l.startsWith('error')),
        r.stderr,
      ).toHaveLength(1);
      expect(r.stderr.trim()).toMatch(re);
    }
    expect(await caHashes()).toEqual(ca);
    expect(
      await onHost(lab, 'node1', [
        'systemctl',
        'show',
        'kube-apiserver',
        '-p',
        'ExecMainStartTimestamp',
        '--value',
      ]),
    ).toBe(started);
  });

  it('wrong-san, kept broken: the controllers log the hostname mismatch, kubectl shows it, the printed command recovers', async () => {
    const ca = await caHashes();
    const res = hardwire(
      [
        'drill',
        'cert-mistake',
        '--kind',
        'wrong-san',
        '--keep-broken',
        '--md',
        join(tmp, 'ws.md'),
        ...common(),
      ],
      { timeoutMs: 600_000 },
    );
    expect(res.code, res.stderr.slice(-3000)).toBe(0);
    const r = JSON.parse(res.stdout) as Report;
    await allInJournal(r.captured);
    for (const c of r.captured) {
      expect(c.unit).toMatch(/^kube-(controller-manager|scheduler)\.service$/);
      expect(c.line).toMatch(/x509: certificate is valid for .*, not 127\.0\.0\.1/);
      expect(c.traces.map((t) => t.citation)).toContain('std@go1.26.8/crypto/x509/verify.go:142');
    }
    // Still broken now: the same request the controllers make, from here.
    const k = await kubectl([
      '--server',
      `https://${addr.node1}:6443`,
      '--tls-server-name',
      '127.0.0.1',
      'get',
      '--raw',
      '/readyz',
    ]);
    expect(k.code).not.toBe(0);
    expect(k.out).toMatch(/x509: certificate is valid for .*, not 127\.0\.0\.1/);
    expect((await kubectl(['get', '--raw', '/readyz'])).out).toBe('ok');
    expect(r.keptBroken?.recoveryCommand).toBe(
      `hardwire wire --inventory ${inv} --state-dir ${state}`,
    );
    const rec = hardwire(r.keptBroken!.recoveryCommand.split(' ').slice(1), { timeoutMs: 600_000 });
    expect(rec.code, rec.stderr.slice(-3000)).toBe(0);
    verify();
    expect(await caHashes()).toEqual(ca);
    console.log(
      `wrong-san: detect ${r.timeToDetectMs} ms; ${r.captured[0]!.host} ${r.captured[0]!.unit}: ${r.captured[0]!.line.slice(0, 240)}`,
    );
  }, 900_000);

  it('unknown-ca: the apiserver logs the unknown authority; the broken scheduler.conf gets 401 from kubectl; recovered, CA unchanged', async () => {
    const ca = await caHashes();
    // The drill itself observes the break for at least 20 s (a Lease's 15 s, and then some), and the
    // probe samples it all that time; a short --hold still runs the hold path before recovery.
    const { r, seen } = await drillWhile(
      ['cert-mistake', '--kind', 'unknown-ca', '--hold', '2'],
      () =>
        kubectlHostConf('node1', '/etc/kubernetes/scheduler.conf', [
          'get',
          'lease',
          'kube-scheduler',
          '-n',
          'kube-system',
        ]),
    );
    await allInJournal(r.captured);
    for (const c of r.captured) {
      expect(c.unit).toBe('kube-apiserver.service');
      expect(c.line).toMatch(
        /"Unable to authenticate the request".*x509: certificate signed by unknown authority/,
      );
      expect(c.traces.map((t) => t.citation)).toEqual(
        expect.arrayContaining([
          'k8s.io/apiserver@v0.36.3/pkg/endpoints/filters/authentication.go:75',
          'std@go1.26.8/crypto/x509/verify.go:157',
        ]),
      );
    }
    expect(
      seen.some((k) => k.code !== 0 && /must be logged in to the server/.test(k.out)),
      JSON.stringify(seen.slice(0, 5)),
    ).toBe(true);
    expect(r.recovered).toBe(true);
    expect(await caHashes()).toEqual(ca);
    verify();
    console.log(`unknown-ca: detect ${r.timeToDetectMs} ms, recover ${r.timeToRecoverMs} ms`);
  }, 900_000);

  it('wrong-client-cert: RBAC refuses system:kube-scheduler (403), the controller-manager logs the user; recovered, CA unchanged', async () => {
    const ca = await caHashes();
    const { r, seen } = await drillWhile(
      ['cert-mistake', '--kind', 'wrong-client-cert', '--hold', '2'],
      () =>
        kubectlHostConf('node1', '/etc/kubernetes/controller-manager.conf', [
          'get',
          'serviceaccount',
          'deployment-controller',
          '-n',
          'kube-system',
        ]),
    );
    await allInJournal(r.captured);
    for (const c of r.captured) {
      expect(c.unit).toBe('kube-controller-manager.service');
      expect(c.line).toMatch(/forbidden: User \\"system:kube-scheduler\\" cannot/);
    }
    expect(
      seen.some((k) =>
        /Error from server \(Forbidden\).*User "system:kube-scheduler" cannot get resource "serviceaccounts"/.test(
          k.out,
        ),
      ),
    ).toBe(true);
    expect(r.symptom?.output).toMatch(/403 Forbidden/);
    expect(r.recovered).toBe(true);
    expect(await caHashes()).toEqual(ca);
    verify();
    console.log(
      `wrong-client-cert: detect ${r.timeToDetectMs} ms, recover ${r.timeToRecoverMs} ms`,
    );
  }, 900_000);

  it('apiserver-down (3.C4): refused for kubectl, leader election lost, systemd restarts the leaders, the scaled Deployment is reconciled', async () => {
    const units = ['kube-controller-manager', 'kube-scheduler'];
    const restarts = async () =>
      (
        await Promise.all(['node1', 'node2'].flatMap((h) => units.map((u) => nRestarts(h, u))))
      ).reduce((a, b) => a + b, 0);
    const before = await restarts();
    // Held 15 s, and both reads at once: under load one sample can take the 5 s request timeout,
    // and a 5 s hold was once missed by every sample (CI at df4ec9a).
    const { r, seen } = await drillWhile(['apiserver-down', '--hold', '15'], async () => {
      const [d, rs] = await Promise.all([
        kubectl(['get', 'deployment', 'level-triggered', '-n', 'hardwire-drill-c4']),
        kubectl([
          'get',
          'rs',
          '-n',
          'hardwire-drill-c4',
          '-o',
          'jsonpath={.items[*].status.replicas}',
        ]),
      ]);
      return {
        out: d.out.trim().slice(0, 200),
        // With the lab's VIP, no host holds it while every apiserver is down: no route, not refused.
        refused: d.code !== 0 && UNREACHABLE.test(d.out),
        rsReplicas:
          rs.code === 0
            ? Math.max(0, ...rs.out.split(' ').map(Number).filter(Number.isFinite))
            : -1,
      };
    });
    await allInJournal(r.captured);
    const lost = r.also.find((a) => a.label === 'leader election lost')!.lines;
    await allInJournal(lost);
    expect(lost.map((l) => l.traces[0]?.citation).join()).toMatch(
      /controllermanager\.go:413|server\.go:328/,
    );
    expect(
      seen.some((s) => s.refused),
      JSON.stringify(seen.map((s) => s.out)),
    ).toBe(true);
    // The ReplicaSet was seen with 3 Pod objects by this test, not only by the drill.
    expect(Math.max(...seen.map((s) => s.rsReplicas))).toBe(3);
    expect(await restarts()).toBeGreaterThan(before);
    expect(r.recovered).toBe(true);
    verify();
    console.log(
      `apiserver-down: detect ${r.timeToDetectMs} ms, recover ${r.timeToRecoverMs} ms; ${JSON.stringify(r.details)}`,
    );
  }, 900_000);

  it('kill-one: SIGKILL kube-apiserver on node1; systemd logs the kill and restarts it; kubectl is refused meanwhile', async () => {
    const before = await nRestarts('node1', 'kube-apiserver');
    const { r, seen } = await drillWhile(['kill-one', '--host', 'node1'], () =>
      kubectl(['--server', `https://${addr.node1}:6443`, 'get', '--raw', '/readyz']),
    );
    await allInJournal(r.captured);
    expect(r.captured[0]!.line).toMatch(/Main process exited, code=killed, status=9\/KILL/);
    expect(seen.some((k) => k.code !== 0 && /refused/.test(k.out))).toBe(true);
    expect(await nRestarts('node1', 'kube-apiserver')).toBe(before + 1);
    const outages = r.details.outages as { probe: string; downMs: number | null }[];
    expect(outages.find((o) => o.probe === '/readyz on node1')?.downMs).toBeGreaterThan(0);
    expect(outages.some((o) => o.probe === '/readyz on node2')).toBe(false);
    expect(r.recovered).toBe(true);
    verify();
    console.log(
      `kill-one: detect ${r.timeToDetectMs} ms; all back ${r.details.allBackMs} ms; ${JSON.stringify(outages)}`,
    );
  }, 600_000);
});
