// `hardwire audit` on the learner's hand-wired cluster: a 1-host workers lab wired by
// test/guide/kthw.sh, a plain shell script following Kelsey Hightower's guide (its units and flags as
// the guide writes them, each adaptation marked). Everything the audit says is checked against what is
// read here: each process's flags from /proc/<pid>/cmdline, hardwire's own citation for the same flag
// from the unit files `hardwire render` writes for the same inventory, and the host's files hashed
// before and after.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { hardwire } from './helpers/cli.ts';
import { remote, testLab, type TestLab } from './helpers/lab.ts';
import { tempDir } from './helpers/tmp.ts';
import { cmdlineFlags, hostState } from './helpers/audit-evidence.ts';
import { ensureAll } from '../core/components/binaries/index.ts';
import type { BinaryName, ComponentName } from '../core/components/registry/index.ts';
import { labPaths } from '../harness/lab/index.ts';
import { unitPath } from '../core/render/host-tree.ts';
import { modelsFor } from '../core/components/models/index.ts';
import { loadValidInventory } from '../core/validate/inventory.ts';
import type { Session } from '../core/transport/index.ts';
import type { AuditReport } from '../harness/audit/index.ts';
import { repoRoot } from '../lib/paths.ts';
import { PINNED_KUBERNETES } from '../lib/constants.ts';

const LAB = 'kthw';
/** What the guide's downloads-amd64.txt fetches, built here; the names its docs move into place. */
const DOWNLOADS: BinaryName[] = [
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kubectl',
  'kubelet',
  'kube-proxy',
  'etcd',
  'etcdctl',
  'containerd',
  'containerd-shim-runc-v2',
  'runc',
  'crictl',
  'bridge',
  'host-local',
  'loopback',
];
const GUIDE: ComponentName[] = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
];
const NODE: ComponentName[] = ['kubelet', 'kube-proxy'];

let lab: TestLab;
let s: Session;
let host: string;
let inventory: string;
let run: { code: number; stdout: string; stderr: string };
let report: AuditReport;
let before: string;
let after: string;

beforeAll(async () => {
  lab = await testLab(LAB, 1, { workers: true });
  host = lab.info.hosts[0]!.name;
  const address = lab.info.hosts[0]!.address;
  inventory = labPaths({ name: LAB, stateDir: lab.stateDir }).inventory;
  s = await lab.ssh(host);
  const bins = await ensureAll(DOWNLOADS);
  const dir = '/root/kthw';
  await s.writeFilesAtomic([
    {
      path: `${dir}/kthw.sh`,
      mode: 0o755,
      data: readFileSync(join(repoRoot, 'test/guide/kthw.sh')),
    },
    ...bins.map((b) => ({
      path: `${dir}/downloads/${b.name}`,
      mode: 0o755,
      data: { file: b.path, size: statSync(b.path).size },
    })),
  ]);
  const wired = await s.exec(['bash', `${dir}/kthw.sh`, address], {
    allowFail: true,
    timeoutMs: 600_000,
  });
  if (wired.code !== 0)
    throw new Error(
      `kthw.sh exited ${wired.code}: ${`${wired.stdout}${wired.stderr}`.trim().split('\n').slice(-12).join(' | ')}`,
    );
  // The kubelet has registered its Node: every process the audit should find is up and serving.
  const kubectl = ['kubectl', '--kubeconfig', `${dir}/admin.kubeconfig`];
  for (let i = 0; i < 120; i++) {
    if ((await remote(s, [...kubectl, 'get', 'node', host, '-o', 'name'])) === `node/${host}`)
      break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  before = await hostState(s);
  run = hardwire(
    ['audit', '--inventory', inventory, '--state-dir', lab.stateDir, '--json', '--quiet'],
    {
      timeoutMs: 300_000,
    },
  );
  after = await hostState(s);
  report = JSON.parse(run.stdout) as AuditReport;
}, 1_500_000);

afterAll(async () => {
  await s?.close();
  // HARDWIRE_KEEP_LAB=1 leaves the lab up to look at (its inventory is under /tmp/hardwire-test-labs/kthw).
  if (!process.env.HARDWIRE_KEEP_LAB) await lab?.down();
});

describe("hardwire audit on a cluster wired by Kelsey Hightower's guide", () => {
  it('reads everything (exit 0, nothing partial) and writes nothing on the host', () => {
    expect(run.code, run.stderr).toBe(0);
    expect(report.partial, run.stderr).toEqual([]);
    expect(before.split('\n').length).toBeGreaterThan(100);
    expect(after).toBe(before);
  });

  it("finds the guide's units' processes, every flag of each one's /proc/<pid>/cmdline in the report with a registration and a read site, none unknown", async () => {
    const h = report.hosts.find((x) => x.name === host)!;
    for (const c of [...GUIDE, ...NODE, 'containerd']) {
      const procs = h.processes.filter((p) => p.component === c);
      expect(procs, c).toHaveLength(1);
      const p = procs[0]!;
      const { argv0, flags } = await cmdlineFlags(s, p.pid);
      expect(argv0.split('/').pop(), c).toBe(c);
      expect(
        p.flags.map((f) => `--${f.name}=${f.value}`),
        c,
      ).toEqual(flags);
      if (c === 'containerd') continue;
      // The version from the running binary, read here, and the flag map of that version.
      const printed = await remote(s, [`/proc/${p.pid}/exe`, '--version']);
      expect(p.version, c).toBe(`v${/(\d+\.\d+\.\d+)/.exec(printed)![1]}`);
      expect(p.map, c).toBe(`core/flags/data/${PINNED_KUBERNETES}/${c}.json`);
      expect(p.flags.length, c).toBeGreaterThan(0);
      for (const f of p.flags) {
        expect(f.status, `${c} --${f.name}`).toBe('read');
        expect(f.registeredAt?.ref, `${c} --${f.name}`).toMatch(/@v\d+\.\d+\.\d+\/.+:\d+$/);
        expect(f.readAt.length, `${c} --${f.name}`).toBeGreaterThan(0);
      }
    }
    // The guide's own flags, as its units write them: the unit on the host and the argv agree.
    const api = h.processes.find((p) => p.component === 'kube-apiserver')!;
    expect(api.flags.find((f) => f.name === 'etcd-servers')?.value).toBe('http://127.0.0.1:2379');
    expect(api.flags.find((f) => f.name === 'runtime-config')?.value).toBe('api/all=true');
  });

  it("names, for each flag the guide and hardwire both pass, the read site hardwire's own rendered unit cites; and shows the guide's other flags", () => {
    const rendered = tempDir('hardwire-kthw-render-');
    const r = hardwire(['render', '--inventory', inventory, '--state-dir', rendered]);
    expect(r.code, r.stderr).toBe(0);
    const h = report.hosts.find((x) => x.name === host)!;
    let same = 0;
    const guideOnly: string[] = [];
    for (const c of [...GUIDE, ...NODE]) {
      const unit = readFileSync(join(rendered, LAB, 'hosts', host, unitPath(c)), 'utf8').split(
        '\n',
      );
      const cites = new Map<string, string>();
      unit.forEach((l, i) => {
        const m = /^\s*--([a-z0-9-]+)=/.exec(l);
        const cite = unit[i - 1]?.trim();
        if (m && cite?.startsWith('#   ')) cites.set(m[1]!, cite.slice(4));
      });
      for (const f of h.processes.find((p) => p.component === c)!.flags) {
        const mine = cites.get(f.name);
        if (mine === undefined) {
          guideOnly.push(`${c} --${f.name}`);
          continue;
        }
        expect(f.cite, `${c} --${f.name}`).toBe(mine);
        same++;
      }
    }
    expect(same).toBeGreaterThan(15);
    // The guide passes these and hardwire does not; each is in the report with its read site (above).
    expect(guideOnly).toEqual(
      expect.arrayContaining([
        'kube-apiserver --event-ttl',
        'kube-apiserver --runtime-config',
        'kube-apiserver --v',
      ]),
    );
  });

  it("names the protections hardwire sets that the guide lacks, with hardwire's reason for each", () => {
    const h = report.hosts.find((x) => x.name === host)!;
    const inv = loadValidInventory(inventory);
    const models = modelsFor({ inv, host: inv.hosts[0]! });
    const why = (c: string, name: string) =>
      models.find((m) => m.component === c)!.flags.find((f) => f.name === name)?.why ??
      models
        .find((m) => m.component === c)!
        .files?.flatMap((f) => f.fields ?? [])
        .find((f) => f.key === name)?.why;
    const lacks = (c: string) => h.processes.find((p) => p.component === c)!.lacks ?? [];
    // The guide's etcd is plain HTTP on loopback: no client certificates at all.
    for (const [c, name] of [
      ['etcd', 'client-cert-auth'],
      ['kube-apiserver', 'etcd-cafile'],
      ['kubelet', 'readOnlyPort'],
      ['kubelet', 'seccompDefault'],
    ] as const) {
      const lack = lacks(c).find((l) => l.name === name);
      expect(lack, `${c} ${name}`).toBeDefined();
      expect(lack!.why, `${c} ${name}`).toBe(why(c, name));
    }
  });

  it('--cis runs the real kube-bench on the host for every target, from a temporary directory it removes; nothing else written', async () => {
    const mark = await hostState(s);
    const r = hardwire(
      [
        'audit',
        '--inventory',
        inventory,
        '--state-dir',
        lab.stateDir,
        '--cis',
        '--json',
        '--quiet',
      ],
      { timeoutMs: 600_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as AuditReport;
    expect(doc.partial).toEqual([]);
    expect(doc.kubeBench?.benchmark).toBe('cis-1.12');
    const c = doc.hosts.find((x) => x.name === host)!.cis!;
    expect(c.targets).toEqual(['master', 'etcd', 'controlplane', 'node']);
    const recount = { PASS: 0, FAIL: 0, WARN: 0, INFO: 0 };
    for (const x of c.checks) recount[x.status] += 1;
    expect(recount).toEqual(c.totals);
    expect(c.checks.length).toBeGreaterThan(90);
    // The guide's etcd serves plain HTTP: no client certificate auth (CIS 2.2), which kube-bench
    // reads from the running process's own argv.
    expect(c.checks.find((x) => x.id === '2.2')?.status).toBe('FAIL');
    expect(await remote(s, ['sh', '-c', 'ls -d /tmp/hardwire-cis.* 2>/dev/null | wc -l'])).toBe(
      '0',
    );
    expect(await hostState(s)).toBe(mark);
  });

  it('checks the certificates the guide made with openssl: signed by its CA, end dates as openssl reads them, no key in the report', async () => {
    const h = report.hosts.find((x) => x.name === host)!;
    const tls = '/var/lib/kubernetes/kube-api-server.crt';
    const c = h.certs.find((x) => x.path === tls)!;
    expect(c.signedBy).toBe('/var/lib/kubernetes/ca.crt');
    const end = await remote(s, ['openssl', 'x509', '-noout', '-enddate', '-in', tls]);
    expect(new Date(end.replace('notAfter=', '')).toISOString()).toBe(c.notAfter);
    expect(run.stdout).not.toMatch(/PRIVATE KEY/);
  });
});
