// upgrade plan's live half (issue 24) on a wired 1-host lab whose apiserver serves
// networking.k8s.io/v1beta1 through --runtime-config (v1.36.3 turns it off by default, and v1.37.2
// stops serving its ServiceCIDR and IPAddress kinds). Read independently with kubectl at that
// version: the objects the plan lists as blocking. upgrade apply runs the same live checks before
// any write: with those objects stored it refuses (and --dry-run too), exit 2 and one line. Then
// kube-apiserver stopped: plan and apply exit 2, one line naming the gate and the host. Each
// refusal is checked on the host itself: its files hashed there (sha256sum) before and after.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { hardwire } from './helpers/cli.ts';
import { remote, testLab, type TestLab } from './helpers/lab.ts';
import { moduleDir, reopen } from './helpers/modcache.ts';
import type { AuditReport } from '../harness/audit/index.ts';
import { KCM_LISTS_ALL } from '../harness/audit/apis.ts';

let lab: TestLab;
let inv: string;
let state: string;
let admin: string;
const KUBECTL = join(process.env.HOME ?? '/root', '.cache/hardwire/bin/kubectl/v1.36.3/kubectl');
const GV = 'networking.k8s.io/v1beta1';

interface Row {
  group: string;
  version: string;
  kind: string;
  resource: string | null;
  served: boolean;
  objects: string[];
  removedAt: string;
}
interface Doc {
  blocking: number;
  live: { checked: boolean; apis: Row[] };
}

function kubectlNames(resource: string): string[] {
  const r = spawnSync(KUBECTL, ['--kubeconfig', admin, 'get', '--raw', `/apis/${GV}/${resource}`], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { items: { metadata: { name: string } }[] }).items
    .map((i) => i.metadata.name)
    .sort();
}

/** `upgrade plan --to v1.37.2 --json` on this lab: exit 1 (objects block), its document. */
function planJson(): Doc {
  const r = hardwire([
    'upgrade',
    'plan',
    '--to',
    'v1.37.2',
    '--inventory',
    inv,
    '--state-dir',
    state,
    '--json',
  ]);
  expect(r.code, r.stderr.slice(-2000)).toBe(1);
  return JSON.parse(r.stdout) as Doc;
}

/** The networking.k8s.io/v1beta1 row of `kind`. */
const v1beta1 = (rows: Row[], kind: string) =>
  rows.find((a) => a.group === 'networking.k8s.io' && a.version === 'v1beta1' && a.kind === kind)!;

async function onHost(argv: string[]): Promise<string> {
  const s = await lab.ssh('node1');
  try {
    return await remote(s, argv);
  } finally {
    await s.close();
  }
}

/** Every file hardwire writes on a host: binaries, units, kubeconfigs, PKI, its records and backups. */
const hashHost = () =>
  onHost([
    'sh',
    '-c',
    'find /usr/local/bin /etc/kubernetes /etc/systemd/system /var/lib/hardwire -xdev -type f -print0 | sort -z | xargs -0 sha256sum',
  ]);

/** exit 2 and exactly one `error:` line on stderr, nothing on stdout: that line. */
function refusal(r: { code: number; stdout: string; stderr: string }): string {
  expect(r.code, r.stderr.slice(-2000)).toBe(2);
  expect(r.stdout).toBe('');
  const lines = r.stderr
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('error:'));
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

beforeAll(async () => {
  lab = await testLab('upgradelive', 1);
  inv = lab.info.inventory;
  state = join(lab.stateDir, 'state');
  const doc = parse(readFileSync(inv, 'utf8')) as {
    cluster: { name: string; extraArgs?: Record<string, Record<string, string>> };
  };
  admin = join(state, doc.cluster.name, 'kubeconfigs', 'admin.conf');
  doc.cluster.extraArgs = { 'kube-apiserver': { 'runtime-config': `${GV}=true` } };
  writeFileSync(inv, stringify(doc));
  const w = hardwire(['wire', '--inventory', inv, '--state-dir', state], { timeoutMs: 900_000 });
  if (w.code !== 0) throw new Error(`wire exited ${w.code}: ${w.stderr.slice(-3000)}`);
});

afterAll(async () => {
  await lab?.down();
});

describe('upgrade plan and apply, live', () => {
  it('lists the objects stored in APIs v1.37.2 removes, at their version, as blocking', async () => {
    const cidr = {
      apiVersion: GV,
      kind: 'ServiceCIDR',
      metadata: { name: 'plan-extra' },
      spec: { cidrs: ['10.100.0.0/24'] },
    };
    const c = spawnSync(KUBECTL, ['--kubeconfig', admin, 'create', '-f', '-'], {
      input: JSON.stringify(cidr),
      encoding: 'utf8',
    });
    expect(c.status, c.stderr).toBe(0);
    const doc = planJson();
    expect(doc.live.checked).toBe(true);
    const row = (kind: string) => v1beta1(doc.live.apis, kind);
    const cidrs = kubectlNames('servicecidrs');
    expect(cidrs).toContain('plan-extra');
    expect(cidrs).toContain('kubernetes');
    expect([...row('ServiceCIDR').objects].sort()).toEqual(cidrs);
    expect([...row('IPAddress').objects].sort()).toEqual(kubectlNames('ipaddresses'));
    // Each blocks, and the line it cites is the generated APILifecycleRemoved() returning 1, 37.
    expect(doc.blocking).toBeGreaterThanOrEqual(2);
    for (const kind of ['ServiceCIDR', 'IPAddress']) {
      const m = /^k8s\.io\/api@(v[\d.]+)\/(.+):(\d+)$/.exec(row(kind).removedAt)!;
      const root = moduleDir('k8s.io/api', m[1]!);
      expect(reopen(root, m[2]!, Number(m[3]))).toContain(
        `func (in *${kind}) APILifecycleRemoved()`,
      );
      expect(reopen(root, m[2]!, Number(m[3]) + 1).trim()).toBe('return 1, 37');
    }
    // storage.k8s.io/v1beta1 is off here, as at v1.36.3's defaults: the cluster answers 404 for it.
    const vac = doc.live.apis.find((a) => a.kind === 'VolumeAttributesClass')!;
    expect(vac.served).toBe(false);
    const raw = spawnSync(
      KUBECTL,
      ['--kubeconfig', admin, 'get', '--raw', '/apis/storage.k8s.io/v1beta1'],
      { encoding: 'utf8' },
    );
    expect(raw.status).not.toBe(0);
  });

  // hardwire audit, which knows nothing of how this cluster was made: the same objects, listed on
  // node1 through its kube-controller-manager's own kubeconfig, and nothing written.
  it("audit --upgrade-to lists the same objects through the kube-controller-manager's kubeconfig, blocks on them, and writes nothing", async () => {
    const before = await hashHost();
    const r = hardwire(
      ['audit', '--inventory', inv, '--state-dir', state, '--upgrade-to', 'v1.37.2', '--json'],
      { timeoutMs: 300_000 },
    );
    expect(await hashHost()).toBe(before);
    expect(r.code, r.stderr.slice(-2000)).toBe(1);
    expect(r.stderr.trim().split('\n').at(-1)).toMatch(
      /^error: audit: the upgrade to v1\.37\.2 is blocked by \d+ .*removed API\(s\) with stored objects/,
    );
    const report = JSON.parse(r.stdout) as AuditReport;
    expect(report.partial).toEqual([]);
    const kcm = report.hosts[0]!.processes.find((p) => p.component === 'kube-controller-manager')!;
    const kubeconfig = kcm.flags.find((f) => f.name === 'kubeconfig')!.value;
    expect(report.apis).toMatchObject({ to: 'v1.37.2', from: 'v1.36.3' });
    expect(report.apis!.via).toContain(
      `node1: kube-controller-manager pid ${kcm.pid} --kubeconfig ${kubeconfig}`,
    );
    // The server it names is the one in that kubeconfig, read here on the host.
    expect(await onHost(['sed', '-n', 's/^ *server: *//p', kubeconfig])).toBe(report.apis!.server);
    const row = (kind: string) => v1beta1(report.apis!.rows, kind);
    expect([...row('ServiceCIDR').objects].sort()).toEqual(kubectlNames('servicecidrs'));
    expect([...row('ServiceCIDR').objects]).toContain('plan-extra');
    expect([...row('IPAddress').objects].sort()).toEqual(kubectlNames('ipaddresses'));
    expect(report.apis!.rows.find((a) => a.kind === 'VolumeAttributesClass')?.served).toBe(false);
    // upgrade plan, with hardwire's own admin credentials, lists the same rows.
    const plan = planJson();
    const sorted = (rows: Row[]) =>
      rows
        .map((x) => ({ ...x, objects: [...x.objects].sort() }))
        .sort((a, b) =>
          `${a.group}${a.version}${a.kind}`.localeCompare(`${b.group}${b.version}${b.kind}`),
        );
    expect(sorted(report.apis!.rows)).toEqual(sorted(plan.live.apis));
    expect(report.upgrade!.live).toMatchObject({ checked: true, server: report.apis!.server });
    // Why that identity may list them: the kube-controller-manager's bootstrap role, at the line cited.
    const m = /^k8s\.io\/kubernetes@(v[\d.]+)\/(.+):(\d+)$/.exec(KCM_LISTS_ALL)!;
    expect(reopen(moduleDir('k8s.io/kubernetes', m[1]!), m[2]!, Number(m[3])).trim()).toBe(
      'rbacv1helpers.NewRule("list", "watch").Groups("*").Resources("*").RuleOrDie(),',
    );
  }, 300_000);

  it('upgrade apply runs the same live checks before any write: objects in a removed API refuse it, --dry-run too, nothing changed', async () => {
    const before = await hashHost();
    expect(before.split('\n').length).toBeGreaterThan(20);
    const stored = kubectlNames('servicecidrs');
    expect(stored).toContain('plan-extra');
    // The dry run first: it would list the steps, and writes nothing, if the checks were skipped.
    for (const extra of [['--dry-run'], []]) {
      const r = hardwire(
        ['upgrade', 'apply', '--to', 'v1.37.2', '--inventory', inv, '--state-dir', state, ...extra],
        { timeoutMs: 300_000 },
      );
      const line = refusal(r);
      expect(line).toMatch(
        /^error: removed API networking\.k8s\.io\/v1beta1 (IPAddress|ServiceCIDR): \d+ object\(s\) reached through it /,
      );
      expect(line).toContain('nothing was changed on any host');
      // The kind it names is one kubectl lists objects of at that version.
      const kind = /v1beta1 (\w+):/.exec(line)![1]!;
      expect(
        kubectlNames(kind === 'ServiceCIDR' ? 'servicecidrs' : 'ipaddresses').length,
      ).toBeGreaterThan(0);
    }
    expect(await hashHost()).toBe(before);
    expect(await onHost(['systemctl', 'is-active', 'etcd', 'kube-apiserver'])).toBe(
      'active\nactive',
    );
  }, 300_000);

  it('refuses a cluster whose apiserver is stopped: exit 2, one line naming the gate and host, nothing changed', async () => {
    await onHost(['systemctl', 'stop', 'kube-apiserver']);
    const before = await hashHost();
    expect(before.split('\n').length).toBeGreaterThan(20);
    const r = hardwire(
      ['upgrade', 'plan', '--to', 'v1.37.2', '--inventory', inv, '--state-dir', state],
      { timeoutMs: 300_000 },
    );
    expect(refusal(r)).toMatch(/^error: verify: kube-apiserver node1: \/livez and \/readyz: /);
    expect(await hashHost()).toBe(before);
    // apply, dry run and real: the same gate, before any write.
    for (const extra of [['--dry-run'], []]) {
      const a = hardwire(
        ['upgrade', 'apply', '--to', 'v1.37.2', '--inventory', inv, '--state-dir', state, ...extra],
        { timeoutMs: 300_000 },
      );
      expect(refusal(a)).toMatch(
        /^error: verify: kube-apiserver node1: \/livez and \/readyz: .*; nothing was changed on any host/,
      );
    }
    expect(await hashHost()).toBe(before);
    expect(await onHost(['systemctl', 'is-active', 'kube-apiserver'])).toBe('inactive');
  }, 300_000);
});
