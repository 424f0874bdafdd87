// The pure halves of issue 23's node view: the process tree from a /proc dump (proc-tree.ts) and
// CIS 4.x rows merged across planes (node-cis.ts), on dumps and kube-bench results written here.
import { describe, expect, it } from 'vitest';
import {
  buildTree,
  countsOf,
  parseProcDump,
  podOf,
  settled,
  unitOf,
} from '../harness/planes/proc-tree.ts';
import { failWhy, mergeNodeChecks, nodeHosts } from '../harness/compare/node-cis.ts';
import { procHtml, procMarkdown } from '../harness/compare/proc-section.ts';
import { auditPaths, type CheckResult, type HostReport } from '../harness/cis/report.ts';

const POD = '3f2a9c1e-0b7d-4e55-9a1c-77d0e2b4c6f1';
/** One dump line as the reader's shell loop prints it: stat, cgroup, cmdline with NUL as \x01. */
const line = (pid: number, comm: string, ppid: number, cgroup: string, argv: string[]) =>
  `${pid} (${comm}) S ${ppid} ${pid} ${pid} 0 -1 4194560\t${cgroup}\t${argv.map((a) => `${a}\u0001`).join('')}`;
const DUMP = [
  line(1, 'systemd', 0, '/init.scope', ['/lib/systemd/systemd']),
  line(30, 'systemd-journal', 1, '/system.slice/systemd-journald.service', [
    '/lib/systemd/systemd-journald',
  ]),
  line(50, 'sshd', 1, '/system.slice/ssh.service', [
    'sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups',
  ]),
  line(60, 'sshd', 50, '/system.slice/ssh.service', ['sshd: root@notty']),
  line(61, 'sh', 60, '/system.slice/ssh.service', ['sh', '-c', 'for d in /proc/[0-9]*; do …']),
  line(100, 'containerd', 1, '/system.slice/containerd.service', ['/usr/local/bin/containerd']),
  line(110, 'kubelet', 1, '/system.slice/kubelet.service', [
    '/usr/bin/kubelet',
    '--config=/var/lib/kubelet/config.yaml',
  ]),
  line(111, 'kubelet', 110, '/system.slice/kubelet.service', []), // a zombie: no argv
  line(200, 'containerd-shim', 1, '/system.slice/containerd.service', [
    '/usr/local/bin/containerd-shim-runc-v2',
    '-namespace',
    'k8s.io',
    '-id',
    'ab12',
  ]),
  line(210, 'pause', 200, `/kubepods/burstable/pod${POD}/ab12`, ['/pause']),
  line(220, 'kube-apiserver', 200, `/kubepods/burstable/pod${POD}/cd34`, [
    'kube-apiserver',
    '--advertise-address=10.0.0.2',
  ]),
  line(300, 'k0s', 1, '/system.slice/k0sworker.service', [
    '/usr/local/bin/k0s',
    'worker',
    '--token-file=/etc/k0s/worker.token',
  ]),
  line(310, 'containerd', 300, '/system.slice/k0sworker.service', [
    '/var/lib/k0s/bin/containerd',
    '--config=/etc/k0s/containerd.toml',
  ]),
  line(320, 'kubelet', 300, '/system.slice/k0sworker.service', [
    '/var/lib/k0s/bin/kubelet',
    '--config=/run/k0s/kubelet/config.yaml',
  ]),
  line(400, 'we (ird) name', 1, '/system.slice/odd.service', ['odd', '', 'x y']),
].join('\n');

describe('process tree from a /proc dump', () => {
  it('parses stat, cgroup and argv (comm with spaces and parentheses, empty arguments kept)', () => {
    const p = parseProcDump(DUMP);
    expect(p).toHaveLength(15);
    expect(p.find((x) => x.pid === 400)).toEqual({
      pid: 400,
      ppid: 1,
      comm: 'we (ird) name',
      argv: ['odd', '', 'x y'],
      cgroup: '/system.slice/odd.service',
    });
    expect(p.find((x) => x.pid === 111)?.argv).toEqual([]);
  });

  it('is a tree from PID 1, SSH sessions and zombies left out, each process labelled with what runs it', () => {
    const t = buildTree(parseProcDump(DUMP));
    expect(t.map((n) => `${n.pid}:${n.ppid}:${n.depth}:${n.kind}`)).toEqual([
      '1:0:0:init',
      '30:1:1:unit',
      '100:1:1:unit',
      '110:1:1:unit',
      '200:1:1:shim',
      '210:200:2:container',
      '220:200:2:container',
      '300:1:1:unit',
      '310:300:2:k0s-child',
      '320:300:2:k0s-child',
      '400:1:1:unit',
    ]);
    const at = (pid: number) => t.find((n) => n.pid === pid)!;
    expect(at(110).under).toBe('systemd unit kubelet.service');
    expect(at(220)).toMatchObject({ pod: POD, under: `Pod ${POD} (kubelet), shim 200` });
    expect(at(320).under).toBe('k0s (pid 300)');
    expect(countsOf(t)).toEqual({ units: 5, k0sChildren: 2, shims: 1, containers: 2, pods: 1 });
  });

  it('keeps only what both reads have with the same parent and argv', () => {
    const a = parseProcDump(DUMP);
    const b = a.filter((p) => p.pid !== 220).map((p) => (p.pid === 310 ? { ...p, ppid: 1 } : p));
    expect(settled(a, b).map((p) => p.pid)).toEqual(
      a.map((p) => p.pid).filter((pid) => pid !== 220 && pid !== 310),
    );
  });

  it('reads the unit and the Pod from cgroup paths (cgroupfs and systemd drivers)', () => {
    expect(unitOf('/system.slice/containerd.service')).toBe('containerd.service');
    expect(unitOf('/kubepods/besteffort/podx/abc')).toBe('');
    expect(
      podOf(
        `/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${POD.replaceAll('-', '_')}.slice/cri-containerd-ab.scope`,
      ),
    ).toBe(POD);
    expect(podOf('/kubepods/burstable/pod5c0e7b1a9d3f4e2a8b6c1d0e9f8a7b6c/4f1e')).toBe(
      '5c0e7b1a9d3f4e2a8b6c1d0e9f8a7b6c',
    ); // a static Pod: a hash, not a UUID
    expect(podOf('/system.slice/kubelet.service')).toBeUndefined();
  });

  it("renders each host's tree in Markdown and HTML, argv indented by depth and wrapped", () => {
    const t = buildTree(parseProcDump(DUMP));
    const host = { host: 'lab/node1', role: 'node', source: 'x', procs: t, counts: countsOf(t) };
    const s = {
      hardwire: [host],
      kubeadm: { none: 'not collected: no' },
      k0s: { none: 'no host was read' },
      yours: { none: 'not asked' },
    };
    const md = procMarkdown(s).join('\n');
    expect(md).toContain(
      `| 220 | 200 | Pod ${POD} (kubelet), shim 200 | \`    kube-apiserver --advertise-address=10.0.0.2\` |`,
    );
    expect(md).toContain(
      'systemd units systemd-journald.service, containerd.service, kubelet.service, k0sworker.service, odd.service',
    );
    const html = procHtml(s);
    expect(html.match(/<tr data-pid=/g)).toHaveLength(t.length);
    expect(html).toContain(
      '<pre style="padding-left:2em">kube-apiserver --advertise-address=10.0.0.2</pre>',
    );
  });
});

const check = (
  id: string,
  status: CheckResult['status'],
  actual = '',
  paths: string[] = [],
): CheckResult => ({
  id,
  target: 'node',
  text: `check ${id}`,
  status,
  scored: true,
  remediation: '',
  actual,
  reason: '',
  paths,
});
const host = (name: string, targets: string[], checks: CheckResult[]): HostReport => ({
  host: name,
  roles: [],
  targets,
  skipped: undefined,
  byTarget: {},
  totals: { PASS: 0, FAIL: 0, WARN: 0, INFO: 0 },
  counted: { PASS: 0, FAIL: 0, WARN: 0, INFO: 0 },
  checks,
  seconds: 1,
});

describe('CIS 4.x rows merged across planes', () => {
  it("one row per check id, the worst status of a plane's nodes, a line for each FAIL that another plane does not have", () => {
    const rows = mergeNodeChecks({
      hardwire: [
        host(
          'node1',
          ['node'],
          [check('4.1.9', 'PASS'), check('4.1.10', 'PASS'), check('4.2.10', 'WARN')],
        ),
      ],
      kubeadm: [
        host(
          'node1',
          ['node'],
          [
            check('4.1.9', 'FAIL', 'permissions=644', ['/var/lib/kubelet/config.yaml']),
            check('4.1.10', 'PASS'),
            check('4.2.10', 'WARN'),
          ],
        ),
        host(
          'node2',
          ['node'],
          [
            check('4.1.9', 'PASS'),
            check('4.1.10', 'FAIL', '', ['/etc/kubernetes/kubelet.conf']),
            check('4.2.10', 'WARN'),
          ],
        ),
      ],
      k0s: [
        host(
          'node2',
          ['node'],
          [
            check('4.1.9', 'FAIL', 'permissions=644', ['/run/k0s/kubelet/config.yaml']),
            check('4.1.10', 'FAIL', '', []),
            check('4.2.10', 'FAIL'),
          ],
        ),
      ],
    });
    expect(rows.map((r) => [r.id, r.status.hardwire, r.status.kubeadm, r.status.k0s])).toEqual([
      ['4.1.9', 'PASS', 'FAIL', 'FAIL'],
      ['4.1.10', 'PASS', 'FAIL', 'FAIL'],
      ['4.2.10', 'WARN', 'WARN', 'FAIL'],
    ]);
    expect(rows[0]!.found.kubeadm?.host).toBe('node1');
    expect(rows[1]!.found.kubeadm?.host).toBe('node2');
    expect(rows[0]!.why).toEqual([
      'kubeadm: kubeadm writes /var/lib/kubelet/config.yaml 0644 (kubelet-start phase); hardwire renders it 0600',
      'k0s: kube-bench read /run/k0s/kubelet/config.yaml and found "permissions=644"',
    ]);
    expect(rows[1]!.why).toEqual([
      'kubeadm: kube-bench read /etc/kubernetes/kubelet.conf and found nothing (the plane keeps this elsewhere, or not at all)',
      'k0s: kube-bench read the running process and found nothing (the plane keeps this elsewhere, or not at all)',
    ]);
    expect(rows[2]!.why).toHaveLength(1);
  });

  it('takes only hosts that ran the node target, and only their 4.x checks; no line when every plane FAILs', () => {
    const cp = host('cp', ['master'], [{ ...check('1.1.1', 'FAIL'), target: 'master' }]);
    const both = host(
      'n',
      ['master', 'node'],
      [{ ...check('1.1.1', 'FAIL'), target: 'master' }, check('4.1.1', 'FAIL')],
    );
    const hs = nodeHosts([
      {
        plane: 'x',
        benchmark: 'b',
        kubeBench: { version: 'v', sha256: '', source: '', origin: '' },
        hosts: [cp, both],
        totals: { PASS: 0, FAIL: 0, WARN: 0, INFO: 0 },
      },
      undefined,
    ]);
    expect(hs.map((h) => [h.host, h.checks.map((c) => c.id)])).toEqual([['n', ['4.1.1']]]);
    expect(mergeNodeChecks({ hardwire: hs, kubeadm: hs })[0]!.why).toEqual([]);
    expect(failWhy('4.2.6', 'k0s', { actual: 'x\ny', paths: ['/a', '/b'] })).toBe(
      'k0s: kube-bench read /a, /b and found "x"',
    );
  });

  it("takes the paths from kube-bench's audit command", () => {
    expect(
      auditPaths(
        "/bin/sh -c 'if test -e /run/k0s/kubelet/config.yaml; then stat -c permissions=%a /run/k0s/kubelet/config.yaml; fi'",
      ),
    ).toEqual(['/run/k0s/kubelet/config.yaml']);
    expect(auditPaths('/bin/ps -fC kubelet')).toEqual([]);
  });
});
