// `hardwire audit` on a live cluster: the wired 1-host workers lab (w1w, wired once by test/w1w.test.ts, which kube-bench's CIS suite shares). Everything it
// says is checked against evidence read here, not from the audit: the flags counted in
// /proc/<pid>/cmdline over SSH, the citations in the unit files hardwire rendered, the certificate's
// end date from openssl on the host, and every file under /etc, /var/lib/kubelet and /usr/local/bin
// hashed (and /var/lib/etcd listed) before and after, to show that the audit wrote nothing.
import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { hardwire } from './cli.ts';
import { remote, type WiredLab } from './lab.ts';
import { tempDir } from './tmp.ts';
import { LAB_SUDO_USER } from '../../harness/lab/prepare.ts';
import { cmdlineFlags, hostState } from './audit-evidence.ts';
import type { Session } from '../../core/transport/index.ts';
import type { AuditReport } from '../../harness/audit/index.ts';
import type { PlanDoc } from '../../core/upgrade/format.ts';
import { unitPath } from '../../core/render/host-tree.ts';
import { PINNED_KUBERNETES } from '../../lib/constants.ts';
import type { ComponentName } from '../../core/components/registry/index.ts';

const CP: ComponentName[] = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'];
const NODE: ComponentName[] = ['kubelet', 'kube-proxy'];

/** The audit describes, on the lab test/w1w.test.ts wired. */
export function auditSuite(lab: () => { w: WiredLab; host: string; s: Session }): void {
  let w: WiredLab;
  let host: string;
  let s: Session;
  let report: AuditReport;
  let run: { code: number; stdout: string; stderr: string };
  const before: Record<string, string> = {};

  beforeAll(async () => {
    ({ w, host, s } = lab());
    before[host] = await hostState(s);
    run = hardwire(['audit', '--inventory', w.inv, '--state-dir', w.state, '--json', '--quiet'], {
      timeoutMs: 300_000,
    });
    report = JSON.parse(run.stdout) as AuditReport;
  }, 1_200_000);

  describe("hardwire audit on hardwire's own wired cluster", () => {
    it('reads everything (exit 0, nothing partial) and writes nothing on the host', async () => {
      expect(run.code, run.stderr).toBe(0);
      expect(report.partial).toEqual([]);
      const after = await hostState(s);
      expect(before[host]!.split('\n').length).toBeGreaterThan(100);
      expect(after).toBe(before[host]);
    });

    it('finds each component running on the host, every flag of its /proc/<pid>/cmdline mapped (none unknown)', async () => {
      const h = report.hosts.find((x) => x.name === host)!;
      expect(h.reachable).toBe(true);
      for (const c of [...CP, ...NODE, 'containerd']) {
        const procs = h.processes.filter((p) => p.component === c);
        expect(procs, c).toHaveLength(1);
        const p = procs[0]!;
        // The argv read here, by pid, and its flags counted here.
        const { argv0, flags } = await cmdlineFlags(s, p.pid);
        expect(argv0.endsWith(`/${c}`), c).toBe(true);
        expect(
          p.flags.map((f) => `--${f.name}=${f.value}`),
          c,
        ).toEqual(flags);
        if (c === 'containerd') {
          expect(p.notes).toContain('hardwire has no flag map for containerd');
          continue;
        }
        expect(p.flags.length, c).toBeGreaterThan(NODE.includes(c as ComponentName) ? 0 : 4);
        expect(
          p.flags.filter((f) => f.status === 'unknown' || f.status === 'unmapped'),
          c,
        ).toEqual([]);
        // hardwire's own cluster runs exactly hardwire's model: it lacks nothing of it.
        expect(p.lacks, c).toBeUndefined();
      }
    });

    it('reads each version from the running binary, and agrees flag for flag with the citations in the units hardwire rendered', async () => {
      const h = report.hosts.find((x) => x.name === host)!;
      const cluster = (parse(readFileSync(w.inv, 'utf8')) as { cluster: { name: string } }).cluster
        .name;
      for (const c of [...CP, ...NODE]) {
        const p = h.processes.find((x) => x.component === c)!;
        const printed = await remote(s, [`/proc/${p.pid}/exe`, '--version']);
        expect(p.version, c).toBe(`v${/(\d+\.\d+\.\d+)/.exec(printed)![1]}`);
        if (c !== 'etcd') expect(p.version, c).toBe(PINNED_KUBERNETES);
        const unit = readFileSync(join(w.state, cluster, 'hosts', host, unitPath(c)), 'utf8').split(
          '\n',
        );
        let checked = 0;
        unit.forEach((l, i) => {
          const m = /^\s*--([a-z0-9-]+)=/.exec(l);
          const cite = unit[i - 1]?.trim();
          if (!m || !cite?.startsWith('#   ')) return;
          expect(p.flags.find((f) => f.name === m[1])?.cite, `${c} --${m[1]}`).toBe(cite.slice(4));
          checked++;
        });
        expect(checked, c).toBe(p.flags.length);
      }
      const kubelet = h.processes.find((x) => x.component === 'kubelet')!;
      expect(kubelet.config?.fields.length).toBeGreaterThan(15);
      expect(kubelet.config!.fields.filter((f) => f.status === 'unknown')).toEqual([]);
    });

    it("checks the certificates the flags name: the apiserver's serving cert, signed by the CA its --client-ca-file names, with openssl's end date", async () => {
      const h = report.hosts.find((x) => x.name === host)!;
      expect(h.certs.length).toBeGreaterThan(5);
      const api = h.processes.find((x) => x.component === 'kube-apiserver')!;
      const tls = api.flags.find((f) => f.name === 'tls-cert-file')!.value;
      const ca = api.flags.find((f) => f.name === 'client-ca-file')!.value;
      const c = h.certs.find((x) => x.path === tls)!;
      expect(c.namedBy).toBe('kube-apiserver --tls-cert-file');
      expect(c.signedBy).toBe(ca);
      expect(c.problems).toEqual([]);
      const end = await remote(s, ['openssl', 'x509', '-noout', '-enddate', '-in', tls]);
      expect(new Date(end.replace('notAfter=', '')).toISOString()).toBe(c.notAfter);
      expect(
        h.certs.filter((x) => x.problems.length).map((x) => `${x.path}: ${x.problems}`),
      ).toEqual([]);
      // No private key reached the report.
      expect(run.stdout).not.toMatch(/PRIVATE KEY/);
    });

    it("--upgrade-to v1.37.2 gives upgrade plan's rows for this cluster, from what runs", () => {
      const mine = hardwire(
        [
          'audit',
          '--inventory',
          w.inv,
          '--state-dir',
          w.state,
          '--upgrade-to',
          'v1.37.2',
          '--json',
          '--quiet',
        ],
        { timeoutMs: 300_000 },
      );
      const theirs = hardwire(
        [
          'upgrade',
          'plan',
          '--to',
          'v1.37.2',
          '--offline',
          '--inventory',
          w.inv,
          '--state-dir',
          w.state,
          '--json',
        ],
        { timeoutMs: 300_000 },
      );
      expect(theirs.stdout.length, theirs.stderr).toBeGreaterThan(0);
      const plan = JSON.parse(theirs.stdout) as PlanDoc;
      const doc = (JSON.parse(mine.stdout) as AuditReport).upgrade!;
      const rows = (d: PlanDoc) =>
        d.components.map((c) => ({
          component: c.component,
          flags: c.rows.map(
            (r) => `${r.flag} ${r.status} ${r.from?.registeredAt} ${r.to?.registeredAt}`,
          ),
          fields: c.fields.map((f) => `${f.key} ${f.status}`),
        }));
      expect(rows(doc).length).toBeGreaterThanOrEqual(6);
      expect(rows(doc)).toEqual(rows(plan));
      expect(mine.code).toBe(plan.blocking > 0 ? 1 : 0);
    });

    it('as a user without root: the same flags, versions from the binaries argv names (said so), and one partial line per file that user cannot read, checked with runuser', async () => {
      const doc = parse(readFileSync(w.inv, 'utf8')) as {
        hosts: { ssh: Record<string, unknown> }[];
        knownHosts?: string;
      };
      for (const h of doc.hosts) h.ssh = { ...h.ssh, user: LAB_SUDO_USER, become: '' };
      if (doc.knownHosts) doc.knownHosts = resolve(dirname(w.inv), doc.knownHosts);
      const inv = join(tempDir('hardwire-audit-user-'), 'inv.yaml');
      writeFileSync(inv, stringify(doc));
      const r = hardwire(
        ['audit', '--inventory', inv, '--state-dir', w.state, '--json', '--quiet'],
        {
          timeoutMs: 300_000,
        },
      );
      const mine = JSON.parse(r.stdout) as AuditReport;
      const h = mine.hosts[0]!;
      const root = report.hosts[0]!;
      expect(h.processes.map((p) => p.component)).toEqual(root.processes.map((p) => p.component));
      for (const p of h.processes) {
        const theirs = root.processes.find((x) => x.pid === p.pid)!;
        expect(p.flags, p.component).toEqual(theirs.flags);
        expect(p.version, p.component).toBe(theirs.version);
        expect(p.notes.join(' '), p.component).toMatch(
          /version read from \/\S+ --version, the file on disk now: \/proc\/\d+\/exe could not be run/,
        );
      }
      // Each file it says it could not read, this user really cannot: checked as root with runuser.
      const files = mine.partial.map(
        (l) => /^\S+: (?:\S+ \(pid \d+\): its --config )?(\/\S+)/.exec(l)?.[1],
      );
      expect(files.every(Boolean), mine.partial.join('\n')).toBe(true);
      for (const f of files)
        expect(
          await remote(s, [
            'sh',
            '-c',
            `runuser -u ${LAB_SUDO_USER} -- test -r ${f} && echo readable || echo unreadable`,
          ]),
          f,
        ).toBe('unreadable');
      // And each certificate it did read, it could.
      expect(h.certs.length).toBeGreaterThan(0);
      expect(r.code).toBe(mine.partial.length ? 1 : 0);
      console.log(
        `audit as ${LAB_SUDO_USER}: ${h.certs.length} certificates read; not read: ${mine.partial.join('; ') || 'nothing'}`,
      );
    });

    it('an unreachable host is one partial line naming it; the rest of the report still comes out; exit 1', () => {
      const doc = parse(readFileSync(w.inv, 'utf8')) as {
        hosts: { name: string; address: string }[];
        knownHosts?: string;
      };
      const first = doc.hosts[0]!;
      // An address of this lab's own /24 that no host holds: the SYN goes to the lab's bridge and no further.
      const gone = { ...first, name: 'gone', address: first.address.replace(/\.\d+$/, '.250') };
      doc.hosts.push(gone);
      if (doc.knownHosts) doc.knownHosts = resolve(dirname(w.inv), doc.knownHosts);
      const inv = join(tempDir('hardwire-audit-'), 'inv.yaml');
      writeFileSync(inv, stringify(doc));
      const r = hardwire(['audit', '--inventory', inv, '--state-dir', w.state, '--quiet'], {
        timeoutMs: 300_000,
      });
      expect(r.code).toBe(1);
      const lines = r.stdout.trim().split('\n');
      expect(lines.filter((l) => l.startsWith('partial:'))).toEqual([
        expect.stringMatching(/^partial: gone: not reachable over SSH \(10\.[\d.]+\.250\): /),
      ]);
      expect(lines.some((l) => /^ {2}kube-apiserver pid \d+ v1\.36\.\d+ /.test(l))).toBe(true);
      expect(r.stderr.trim().split('\n').at(-1)).toMatch(
        /^error: audit: partial, 1 thing\(s\) not read; first: gone: /,
      );
    });
  });
}
