// hardwire audit's mapping, with no lab (test/helpers/audit-suite.ts reads a live cluster): the argv of every
// unit hardwire renders, split as the binary's pflag would, comes out flag for flag with the same
// citation the unit's own comment gives; a flag the map lacks is kept as unknown; certificates are
// made here by the real openssl and checked for expiry and for which CA signed them.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { hardwire } from './helpers/cli.ts';
import { tempDir } from './helpers/tmp.ts';
import { execStartArgv } from '../harness/planes/normalize.ts';
import { argvFlags, mapConfig, mapFlags, mapFor } from '../harness/audit/flags.ts';
import { certPaths, checkCerts } from '../harness/audit/certs.ts';
import { versionOf } from '../harness/audit/discover.ts';
import { auditPlan } from '../harness/audit/upgrade.ts';
import { formatHtml, formatMarkdown } from '../harness/audit/format.ts';
import { cisTargets } from '../harness/audit/index.ts';
import { unbroken } from '../lib/html.ts';
import { renderedHosts, renderedReport } from './helpers/audit-fixture.ts';
import { lacksOf } from '../harness/audit/lacks.ts';
import type { AuditProcess } from '../harness/audit/types.ts';
import { planFor } from '../core/upgrade/plan-for.ts';
import type { PlanDoc } from '../core/upgrade/format.ts';
import { loadValidInventory } from '../core/validate/inventory.ts';
import { loadFlagMap } from '../core/flags/map.ts';
import { PINNED_KUBERNETES } from '../lib/constants.ts';

let hosts: string;
const unitText = (host: string, c: string) =>
  readFileSync(join(hosts, host, 'etc/systemd/system', `${c}.service`), 'utf8');

beforeAll(() => {
  hosts = renderedHosts();
}, 120_000);

/** The unit's flags and the citation line of the comment above each, read from its text here. */
function unitCitations(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const lines = text.split('\n').map((l) => l.trim());
  lines.forEach((l, i) => {
    const m = /^--([a-z0-9-]+)=/.exec(l);
    const prev = lines[i - 1] ?? '';
    if (m && prev.startsWith('#   ')) out.set(m[1]!, prev.slice(4));
  });
  return out;
}

describe('audit maps what hardwire renders, flag for flag', () => {
  const etcdVersion = loadFlagMap('etcd', PINNED_KUBERNETES).componentVersion;
  it.each([
    ['cp-0', 'etcd', etcdVersion],
    ['cp-0', 'kube-apiserver', PINNED_KUBERNETES],
    ['cp-0', 'kube-controller-manager', PINNED_KUBERNETES],
    ['cp-0', 'kube-scheduler', PINNED_KUBERNETES],
    ['w-1', 'kubelet', PINNED_KUBERNETES],
    ['w-1', 'kube-proxy', PINNED_KUBERNETES],
  ])('%s %s', (host, component, version) => {
    const text = unitText(host, component);
    const m = mapFor(component, version);
    expect('map' in m, 'why' in m ? m.why : '').toBe(true);
    const rows = mapFlags(execStartArgv(text), m);
    // Counted from the unit's text, not from the splitter under test.
    const flagLines = text.split('\n').filter((l) => /^\s*--[a-z0-9-]+=/.test(l));
    expect(rows).toHaveLength(flagLines.length);
    expect(rows.filter((r) => r.status === 'unknown' || r.status === 'unmapped')).toEqual([]);
    const cites = unitCitations(text);
    expect(cites.size).toBeGreaterThan(0);
    for (const r of rows) if (cites.has(r.name)) expect(r.cite, r.name).toBe(cites.get(r.name));
  });

  it("the kubelet's config file: every field rendered is in the map, with its declaration", () => {
    const text = readFileSync(join(hosts, 'w-1', 'var/lib/kubelet/config.yaml'), 'utf8');
    const fields = mapConfig(text, mapFor('kubelet', PINNED_KUBERNETES));
    expect(fields.length).toBeGreaterThan(15);
    expect(fields.filter((f) => f.status === 'unknown' || f.status === 'unmapped')).toEqual([]);
    expect(
      fields.find((f) => f.name === 'authentication.x509.clientCAFile')?.registeredAt?.ref,
    ).toMatch(/^k8s\.io\/kubelet@v0\.36\.\d+\/config\/v1beta1\/types\.go:\d+$/);
  });
});

describe('audit splits argv as pflag does, and drops nothing', () => {
  const map = loadFlagMap('kube-apiserver', PINNED_KUBERNETES);
  it('a bool flag takes no following word; a shorthand is its long name; repeated flags stay rows', () => {
    expect(
      argvFlags(
        [
          'kube-apiserver',
          '--allow-privileged',
          'positional',
          '--v',
          '2',
          '-v=4',
          '--x=1',
          '--x=2',
        ],
        map,
      ),
    ).toEqual([
      { name: 'allow-privileged', value: 'true' },
      { name: 'v', value: '2' },
      { name: 'v', value: '4' },
      { name: 'x', value: '1' },
      { name: 'x', value: '2' },
    ]);
  });

  it('a flag the map lacks is reported unknown; a binary with no map, unmapped; secrets not repeated', () => {
    const m = mapFor('kube-apiserver', PINNED_KUBERNETES);
    const rows = mapFlags(
      [
        'kube-apiserver',
        '--no-such-flag=1',
        '--token-auth-file=/t.csv',
        '--etcd-servers=https://e:2379',
      ],
      m,
    );
    expect(rows.map((r) => [r.name, r.status])).toEqual([
      ['no-such-flag', 'unknown'],
      ['token-auth-file', 'read'],
      ['etcd-servers', 'read'],
    ]);
    expect(rows[1]!.value).toBe('/t.csv'); // a file's path is not a secret
    // A release with no map, and none built on demand (--no-regenerate): the command that builds one.
    const none = mapFor('kube-apiserver', 'v1.29.0');
    expect('why' in none && none.why).toBe(
      'no flag map for kube-apiserver v1.29.0 here; "hardwire flags --regenerate --kubernetes-version v1.29.0" builds one from its Go modules',
    );
    // Not a release: refused in one line before Go is asked.
    const r = hardwire(['flags', '--regenerate', '--kubernetes-version', 'v1.29']);
    expect([r.code, r.stderr.trim().split('\n').at(-1)]).toEqual([
      2,
      'error: version: cannot build a flag map for Kubernetes v1.29: v1.29 is not a Kubernetes release a flag map can be built for (committed module files: v1.36.3, v1.37.2)',
    ]);
    expect(mapFlags(['kube-apiserver', '--a=1', '--password=hunter2'], none)).toEqual([
      { name: 'a', value: '1', status: 'unmapped', readAt: [] },
      { name: 'password', value: '(redacted)', status: 'unmapped', readAt: [] },
    ]);
    expect(mapFor('containerd', 'v2.1.4')).toEqual({
      why: 'hardwire has no flag map for containerd',
    });
  });

  it('reads the version each binary prints', () => {
    expect(versionOf('Kubernetes v1.36.3\n')).toBe('v1.36.3');
    expect(versionOf('etcd Version: 3.6.8\nGit SHA: abc\nGo Version: go1.24\n')).toBe('v3.6.8');
    expect(versionOf('no version here')).toBeUndefined();
    expect(versionOf('v1.36.3+k0s.2\n')).toBe('v1.36.3+k0s.2');
    expect(versionOf('Kubernetes v1.36.3+k0s\n')).toBe('v1.36.3+k0s');
    const m = mapFor('kube-apiserver', 'v1.36.3+k0s');
    expect('map' in m && m.file).toBe('core/flags/data/v1.36.3/kube-apiserver.json');
  });
});

describe('audit checks the certificates the flags name (real openssl)', () => {
  it('names the CA file that signed each, and what is wrong', () => {
    const d = tempDir('hardwire-audit-certs-');
    const ossl = (...a: string[]) => execFileSync('openssl', a, { cwd: d, stdio: 'pipe' });
    for (const ca of ['ca', 'other-ca'])
      ossl(
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        `${ca}.key`,
        '-out',
        `${ca}.crt`,
        '-days',
        '30',
        '-subj',
        `/CN=${ca}`,
      );
    ossl(
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      'srv.key',
      '-out',
      'srv.csr',
      '-subj',
      '/CN=kube-apiserver',
      '-addext',
      'subjectAltName=DNS:kubernetes,IP:10.96.0.1',
    );
    ossl(
      'x509',
      '-req',
      '-in',
      'srv.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'srv.crt',
      '-days',
      '10',
      '-copy_extensions',
      'copy',
    );
    ossl(
      'x509',
      '-req',
      '-in',
      'srv.csr',
      '-CA',
      'other-ca.crt',
      '-CAkey',
      'other-ca.key',
      '-CAcreateserial',
      '-out',
      'stray.crt',
      '-days',
      '10',
    );
    const flags = [
      { name: 'tls-cert-file', value: join(d, 'srv.crt') },
      { name: 'tls-private-key-file', value: join(d, 'srv.key') },
      { name: 'client-ca-file', value: join(d, 'ca.crt') },
      { name: 'kubelet-client-certificate', value: join(d, 'stray.crt') },
    ].map((f) => ({ ...f, status: 'read' as const, readAt: [] }));
    const paths = certPaths(flags, []);
    expect(paths.map((p) => p.namedBy)).toEqual([
      '--tls-cert-file',
      '--client-ca-file',
      '--kubelet-client-certificate',
    ]);
    const files = paths.map((p) => ({ ...p, pem: readFileSync(p.path, 'utf8') }));
    const now = checkCerts(files);
    const by = (f: string) => now.find((c) => c.path.endsWith(f))!;
    expect(by('srv.crt').signedBy).toBe(join(d, 'ca.crt'));
    expect(by('srv.crt').sans).toEqual(['DNS:kubernetes', 'IP Address:10.96.0.1']);
    expect(by('srv.crt').problems).toEqual(['expires in 9 days']);
    expect(by('ca.crt').signedBy).toBe(join(d, 'ca.crt'));
    expect(by('stray.crt').problems).toContain('signed by no CA file a process on this host names');
    const later = checkCerts(files, new Date(Date.now() + 40 * 86_400_000));
    expect(later.map((c) => c.problems[0])).toEqual(['expired', 'expired', 'expired']);
    // A file that holds no certificate, or one that does not parse, is a problem row: the rest stays.
    const torn = readFileSync(join(d, 'srv.crt'), 'utf8').replace(
      /^(-----BEGIN CERTIFICATE-----\n.{20})./m,
      '$1!',
    );
    const odd = checkCerts([
      ...files,
      { path: '/x/torn.crt', namedBy: '--tls-cert-file', pem: torn },
      { path: '/x/empty.crt', namedBy: '--client-ca-file', pem: 'not a pem\n' },
    ]);
    expect(odd.slice(0, 3)).toEqual(now);
    expect(odd.slice(3).map((c) => [c.path, c.problems.length, c.notAfter])).toEqual([
      ['/x/torn.crt', 1, ''],
      ['/x/empty.crt', 1, ''],
    ]);
    expect(odd[3]!.problems[0]).toMatch(/^its certificate does not parse \(/);
    expect(odd[4]!.problems[0]).toBe('no PEM CERTIFICATE block in the file');
  });
});

describe('audit --upgrade-to: upgrade plan from what runs', () => {
  const reportOf = (extra: string[] = []) => renderedReport(hosts, extra);

  it("gives upgrade plan's rows for the same flags, flag for flag and field for field", () => {
    const mine = auditPlan(reportOf(), 'v1.37.2');
    const theirs = planFor(
      loadValidInventory(join(import.meta.dirname, '..', 'hosts', 'example-workers.yaml')),
      'v1.37.2',
    );
    const rows = (d: PlanDoc) =>
      d.components.map((c) => ({
        component: c.component,
        versions: `${c.fromVersion} → ${c.toVersion}`,
        flags: c.rows.map(
          (r) => `${r.flag} ${r.status} ${r.from?.registeredAt} ${r.to?.registeredAt}`,
        ),
        fields: c.fields.map((f) => `${f.key} ${f.status}`),
      }));
    expect(rows(mine).length).toBeGreaterThanOrEqual(6);
    expect(rows(mine)).toEqual(rows(theirs));
    expect(mine.blocking).toBe(theirs.blocking);
  });

  it('a feature gate removed at the target, set on the running apiserver, blocks, cited at both tags', () => {
    const doc = auditPlan(reportOf(['--feature-gates=AuthorizeNodeWithSelectors=true']), 'v1.37.2');
    const g = doc.gates
      .flatMap((x) => x.rows.map((r) => ({ ...r, component: x.component })))
      .find((r) => r.gate === 'AuthorizeNodeWithSelectors' && r.component === 'kube-apiserver');
    expect(g).toMatchObject({ status: 'removed', blocking: true, to: null });
    expect(g!.from!.at).toMatch(
      /^k8s\.io\/kubernetes@v1\.36\.3\/pkg\/features\/kube_features\.go:\d+$/,
    );
    expect(g!.searched!.join(' ')).toContain(
      'k8s.io/kubernetes@v1.37.2/pkg/features/kube_features.go',
    );
    expect(doc.blocking).toBeGreaterThan(auditPlan(reportOf(), 'v1.37.2').blocking);
  });

  it("--md and --html carry the plan as a section of the report: every component's table, the blocking row", () => {
    const r = reportOf(['--feature-gates=AuthorizeNodeWithSelectors=true']);
    r.upgrade = auditPlan(r, 'v1.37.2');
    const md = formatMarkdown(r);
    expect(md).toContain(`\n## Upgrade plan ${PINNED_KUBERNETES} → v1.37.2\n`);
    expect(md).toContain(`\nBlocking: ${r.upgrade.blocking}\n`);
    for (const c of r.upgrade.components)
      expect(md, c.component).toMatch(new RegExp(`\\n### ${c.component}\\b`));
    expect(md).toContain('| AuthorizeNodeWithSelectors=true | removed (blocking) |');
    const page = unbroken(formatHtml(r));
    const section = page.slice(page.indexOf('<section id="upgrade">'));
    expect(section).toContain(`<h2>Upgrade plan ${PINNED_KUBERNETES} → v1.37.2</h2>`);
    expect(section).not.toContain('<h1>');
    for (const c of r.upgrade.components)
      expect(section, c.component).toContain(`<section data-component="${c.component}"><h3>`);
    expect(section).toContain(
      '<tr class="removed"><td class="name">AuthorizeNodeWithSelectors=true</td><td>removed (blocking)</td>',
    );
    // Without --upgrade-to, no plan.
    expect(formatMarkdown(reportOf())).not.toContain('Upgrade plan');
  });
});

describe('audit --cis: kube-bench targets from what runs on a host', () => {
  it.each([
    [
      ['etcd', 'kube-apiserver', 'kubelet'],
      ['etcd', 'control-plane', 'worker'],
      ['master', 'etcd', 'controlplane', 'node'],
    ],
    [['kube-apiserver', 'kube-scheduler'], ['control-plane'], ['master', 'controlplane']],
    [['kubelet', 'kube-proxy', 'containerd'], ['worker'], ['node']],
    [['containerd'], [], []],
  ])('%j', (components, roles, targets) => {
    expect(cisTargets(components)).toEqual({ roles, targets });
  });
});

describe('audit refuses bad input before it reaches any host', () => {
  const inv = join(import.meta.dirname, '..', 'hosts', 'example.yaml');
  it.each([
    [
      ['--upgrade-to', 'v1.99.0'],
      /^error: --upgrade-to: no flag maps for v1\.99\.0 \(have: v1\.36\.3, v1\.37\.2\); /,
    ],
    [
      ['--etcd-to', 'v3.7.0'],
      /^error: --etcd-to: needs --upgrade-to VERSION; add it, or drop --etcd-to$/,
    ],
  ])('%j', (args, line) => {
    const r = hardwire(['audit', '--inventory', inv, ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(line)]);
    expect(r.stdout).toBe('');
  });
});

describe("audit names what hardwire sets and the cluster lacks, with hardwire's reason", () => {
  const inv = () =>
    loadValidInventory(join(import.meta.dirname, '..', 'hosts', 'example-workers.yaml'));
  const proc = (host: string, c: string, drop: string[]): AuditProcess => {
    const argv = execStartArgv(unitText(host, c)).filter(
      (a) => !drop.some((d) => a.startsWith(`--${d}=`)),
    );
    return {
      component: c,
      pid: 1,
      argv,
      versionSource: '',
      flags: mapFlags(argv, mapFor(c, PINNED_KUBERNETES)),
      notes: [],
    };
  };

  it('nothing, for the flags hardwire renders itself', () => {
    for (const [host, c] of [
      ['cp-0', 'kube-apiserver'],
      ['cp-0', 'kube-scheduler'],
      ['w-2', 'kube-proxy'],
    ] as const)
      expect(lacksOf(inv(), host, proc(host, c, [])), c).toEqual([]);
  });

  it("each dropped flag, with the reason the rendered unit's comment gives", () => {
    const lacks = lacksOf(
      inv(),
      'cp-0',
      proc('cp-0', 'kube-apiserver', ['audit-log-path', 'profiling']),
    );
    const text = unitText('cp-0', 'kube-apiserver');
    const why = (f: string) => new RegExp(`^\\s*# --${f}: (.*)$`, 'm').exec(text)![1];
    expect(lacks).toEqual([
      {
        kind: 'flag',
        name: 'audit-log-path',
        hardwire: '/var/log/kubernetes/audit/audit.log',
        why: why('audit-log-path'),
      },
      { kind: 'flag', name: 'profiling', hardwire: 'false', why: why('profiling') },
    ]);
  });

  it("a config field the kubelet's file leaves out", () => {
    const p = proc('w-1', 'kubelet', []);
    const text = readFileSync(join(hosts, 'w-1', 'var/lib/kubelet/config.yaml'), 'utf8').replace(
      /^readOnlyPort: .*\n/m,
      '',
    );
    p.config = {
      path: 'c',
      source: 'c',
      fields: mapConfig(text, mapFor('kubelet', PINNED_KUBERNETES)),
    };
    expect(lacksOf(inv(), 'w-1', p).map((l) => `${l.kind} ${l.name} ${l.hardwire}`)).toEqual([
      'field readOnlyPort 0',
    ]); // A field read whole (a map the flag map has no fields below, as a newer file may have) counts for its leaves.
    const auth = p.config.fields.filter((f) => f.name.startsWith('authentication.'));
    expect(auth.length).toBeGreaterThan(1);
    p.config.fields = [
      ...p.config.fields.filter((f) => !auth.includes(f)),
      { name: 'authentication', value: '{}', status: 'unknown', readAt: [] },
    ];
    expect(lacksOf(inv(), 'w-1', p).map((l) => l.name)).toEqual(['readOnlyPort']);
  });
});
