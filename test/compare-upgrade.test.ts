// compare --upgrade-to's section without a lab: kubeadm v1.37.2's real `upgrade plan` output, captured
// on a kubeadm plane whose ClusterConfiguration passed --concurrent-service-syncs to the
// controller-manager (test/fixtures/kubeadm-upgrade/), beside hardwire's plan of an inventory that
// passes the same flag. kubeadm's verdicts are re-read here from its JSON and text; the finding is
// re-derived from the two flag maps; the refusals of --upgrade-to come before any inventory is read.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { hardwire } from './helpers/cli.ts';
import { repoRoot } from '../lib/paths.ts';
import { loadValidInventory } from '../core/validate/inventory.ts';
import { loadFlagMap } from '../core/flags/map.ts';
import { hardwirePlan, planOfCommands } from '../harness/compare/upgrade-hardwire.ts';
import {
  buildUpgradeSection,
  lineNaming,
  type UpgradeSection,
} from '../harness/compare/upgrade-section.ts';
import { upgradeHtml, upgradeMarkdown, upgradeSummary } from '../harness/compare/upgrade-render.ts';
import { checkUpgradeTarget } from '../harness/compare/upgrade-target.ts';
import type { KubeadmPlanDoc, KubeadmUpgradePlan } from '../harness/planes/upgrade-types.ts';
import type { ComponentCommand } from '../harness/planes/types.ts';
import { kubeadmConfig } from '../harness/planes/kubeadm.ts';
import type { PlaneNode } from '../harness/planes/node-types.ts';
import { blocking } from '../core/upgrade/plan.ts';

const FIX = join(repoRoot, 'test/fixtures/kubeadm-upgrade');
const read = (f: string) => readFileSync(join(FIX, f), 'utf8');
const captured = JSON.parse(read('captured.json')) as {
  upgradePlan: KubeadmUpgradePlan;
  commands: Record<string, ComponentCommand>;
};
const kubeadm = captured.upgradePlan;
const kubeadmDoc = JSON.parse(kubeadm.json.stdout) as KubeadmPlanDoc;
const quiet = { info: () => {}, warn: () => {}, step: () => {} };
const tmp = mkdtempSync(join(tmpdir(), 'hardwire-compare-upgrade-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** hosts/example.yaml with the flag v1.37.2 removed from kube-controller-manager passed through extraArgs. */
function inventoryWithRemovedFlag(): string {
  const doc = parse(readFileSync(join(repoRoot, 'hosts/example.yaml'), 'utf8')) as {
    cluster: Record<string, unknown>;
  };
  doc.cluster.extraArgs = { 'kube-controller-manager': { 'concurrent-service-syncs': '2' } };
  const file = join(tmp, 'inv.yaml');
  writeFileSync(file, stringify(doc));
  return file;
}

async function section(k: UpgradeSection['kubeadm'] = kubeadm): Promise<UpgradeSection> {
  const inv = loadValidInventory(inventoryWithRemovedFlag());
  const hw = await hardwirePlan(inv, tmp, 'v1.37.2', false, quiet);
  return buildUpgradeSection({
    from: 'v1.36.3',
    to: 'v1.37.2',
    kubeadm: k,
    hardwire: hw,
    kubeadmFlags: planOfCommands(captured.commands, 'v1.36.3', 'v1.37.2'),
  });
}

describe('the captured kubeadm v1.37.2 upgrade plan', () => {
  it("is kubeadm's own: exit 0, the version it was run as, and the text and JSON agree on every target", () => {
    expect(kubeadm.version).toBe('v1.37.2');
    expect(kubeadm.text.argv).toEqual(['/usr/bin/kubeadm-v1.37.2', 'upgrade', 'plan', 'v1.37.2']);
    expect([kubeadm.text.exitCode, kubeadm.json.exitCode]).toEqual([0, 0]);
    // Each component row of the JSON appears in the text's tables (tabwriter columns, whitespace-separated);
    // kubeadm itself is left out of them (k8s.io/kubernetes@v1.37.2/cmd/kubeadm/app/cmd/upgrade/plan.go:321).
    const rows = kubeadm.text.stdout.split('\n').map((l) => l.trim().split(/\s+/).join(' '));
    for (const c of kubeadmDoc.availableUpgrades![0]!.components.filter(
      (x) => x.name !== 'kubeadm',
    )) {
      expect(rows, c.name).toContain(
        [c.name, c.nodeName, c.currentVersion, c.newVersion].filter(Boolean).join(' '),
      );
    }
  });
});

describe('compare\'s "Upgrade to v1.37.2" section from it', () => {
  it("kubeadm's verdict per component is what its JSON says: each control-plane component to v1.37.2, the config APIs with no manual upgrade", async () => {
    const u = await section();
    for (const c of kubeadmDoc.availableUpgrades![0]!.components) {
      const row = u.components.find((r) => r.component === c.name);
      expect(row?.kubeadm.join(' '), c.name).toContain(
        `${c.currentVersion || '(none)'} → ${c.newVersion}`,
      );
    }
    for (const c of ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler']) {
      expect(u.components.find((r) => r.component === c)?.kubeadm[0], c).toMatch(
        /^node1: v1\.36\.3 → v1\.37\.2 /,
      );
    }
    for (const v of kubeadmDoc.configVersions!) {
      const comp = v.group.startsWith('kubelet') ? 'kubelet' : 'kube-proxy';
      expect(u.components.find((r) => r.component === comp)?.kubeadm.join(' '), v.group).toContain(
        `manual upgrade required: ${v.manualUpgradeRequired ? 'yes' : 'no'}`,
      );
    }
  });

  it("hardwire finds --concurrent-service-syncs removed at v1.37.2, on both planes, and kubeadm's output never names it", async () => {
    const u = await section();
    // Re-derived from the maps: registered in kube-controller-manager's flag set at v1.36.3, absent at v1.37.2.
    expect(
      loadFlagMap('kube-controller-manager', 'v1.36.3').flags.some(
        (f) => f.name === 'concurrent-service-syncs',
      ),
    ).toBe(true);
    expect(
      loadFlagMap('kube-controller-manager', 'v1.37.2').flags.some(
        (f) => f.name === 'concurrent-service-syncs',
      ),
    ).toBe(false);
    expect(captured.commands['kube-controller-manager']!.argv).toContain(
      '--concurrent-service-syncs=2',
    );
    // kubeadm's own output, read here: no line of it mentions the flag.
    const all = `${kubeadm.text.stdout}${kubeadm.text.stderr}${kubeadm.json.stdout}${kubeadm.json.stderr}`;
    expect(all).not.toContain('concurrent-service-syncs');
    const found = u.findings.filter((f) => f.name === '--concurrent-service-syncs');
    expect(
      found.map((f) => [f.plane, f.component, f.kind, f.status, f.blocking, f.kubeadmSays]),
    ).toEqual([
      ['hardwire', 'kube-controller-manager', 'flag', 'removed', true, null],
      ['kubeadm', 'kube-controller-manager', 'flag', 'removed', true, null],
    ]);
    expect(found[0]!.from).toMatch(
      /^k8s\.io\/cloud-provider@v0\.36\.3\/options\/servicecontroller\.go:\d+$/,
    );
    expect(u.silent).toBe(u.findings.filter((f) => f.kubeadmSays === null).length);
    expect(u.silent).toBeGreaterThanOrEqual(2);
    expect(u.unchecked).toMatch(/validation\.go:735.*#100988/);
  });

  it('a finding kubeadm does name is quoted with its line; names match whole, not as part of a longer one', () => {
    const lines = [
      '[upgrade/config] the flag --concurrent-service-syncs-x is new',
      'kube-proxy  v1.36.3  v1.37.2',
    ];
    expect(lineNaming(lines, '--concurrent-service-syncs')).toBeNull();
    expect(
      lineNaming([...lines, 'extraArgs: concurrent-service-syncs=2'], '--concurrent-service-syncs'),
    ).toBe('extraArgs: concurrent-service-syncs=2');
    expect(lineNaming(lines, 'kube-proxy')).toBe('kube-proxy  v1.36.3  v1.37.2');
  });

  it('renders in text, Markdown and HTML: each component, the finding with "nothing" from kubeadm, kubeadm\'s printed plan', async () => {
    const u = await section();
    const md = upgradeMarkdown(u).join('\n');
    expect(md).toMatch(/^## Upgrade to v1\.37\.2$/m);
    expect(md).toContain('`/usr/bin/kubeadm-v1.37.2 upgrade plan v1.37.2`: exit 0');
    for (const c of u.components) expect(md).toMatch(new RegExp(`^\\| ${c.component} \\|`, 'm'));
    expect(md).toMatch(
      /^\| hardwire's units \| kube-controller-manager \| flag \| --concurrent-service-syncs \| removed \(blocking\) \| .* \| nothing \|$/m,
    );
    expect(md).toContain(kubeadm.text.stdout.trim().split('\n')[0]!);
    const html = upgradeHtml(u);
    expect(html).toMatch(/<section id="upgrade"><h2>Upgrade to v1\.37\.2<\/h2>/);
    expect(html).toContain(
      '<tr class="differs" data-name="--concurrent-service-syncs" data-said="no">',
    );
    const text = upgradeSummary(u).join('\n');
    expect(text).toMatch(
      /∅ hardwire kube-controller-manager flag --concurrent-service-syncs: removed \(blocking\); kubeadm: nothing/,
    );
    expect(text).toContain(`kubeadm says nothing about ${u.silent} of them`);
  });

  it("without kubeadm's output the section says why and compares no finding", async () => {
    const u = await section({ none: 'the kubeadm plane was not collected: lab failed' });
    expect(u.findings).toEqual([]);
    expect(u.components.find((c) => c.component === 'kube-apiserver')?.kubeadm).toEqual([]);
    expect(upgradeSummary(u).join('\n')).toContain(
      'kubeadm: no upgrade plan: the kubeadm plane was not collected: lab failed',
    );
  });
});

describe("kubeadm's kubelet and kube-proxy in the same plan", () => {
  // kubeadm v1.36.3's own component configs (fixture header says how they were printed), the argv
  // its kubelet runs with (kubeadm-flags.env and 10-kubeadm.conf) and its kube-proxy DaemonSet's.
  const docs = read('node-configs.yaml')
    .split(/^---\n/m)
    .filter((d) => /^kind:/m.test(d));
  const config = (kind: string) => docs.find((d) => new RegExp(`^kind: ${kind}$`, 'm').test(d))!;
  const kubeletArgv = [
    '/usr/bin/kubelet',
    '--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf',
    '--kubeconfig=/etc/kubernetes/kubelet.conf',
    '--config=/var/lib/kubelet/config.yaml',
    '--node-ip=10.0.0.11',
  ];
  const node = (extra: string[] = []): PlaneNode => ({
    host: 'node1',
    reasons: {},
    components: {
      kubelet: {
        argv: [...kubeletArgv, ...extra],
        argvSource: 'fixture',
        config: config('KubeletConfiguration'),
      },
      'kube-proxy': {
        argv: [
          '/usr/local/bin/kube-proxy',
          '--config=/var/lib/kube-proxy/config.conf',
          '--hostname-override=node1',
        ],
        argvSource: 'fixture',
        config: config('KubeProxyConfiguration'),
      },
    },
  });
  /** A YAML document's leaf paths, found here without the code under test. */
  const leaves = (v: unknown, at = ''): string[] =>
    v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length
      ? Object.entries(v).flatMap(([k, x]) => leaves(x, at ? `${at}.${k}` : k))
      : [at];

  it('plans every flag the kubelet and kube-proxy pass and every field of their config files, at both tags', () => {
    const p = planOfCommands(captured.commands, 'v1.36.3', 'v1.37.2', node());
    for (const [c, kind, argv] of [
      ['kubelet', 'KubeletConfiguration', 4],
      ['kube-proxy', 'KubeProxyConfiguration', 2],
    ] as const) {
      const plan = p.components.find((x) => x.component === c)!;
      expect(plan, c).toBeDefined();
      expect(
        plan.rows.map((r) => r.status),
        c,
      ).toEqual(Array(argv).fill('unchanged'));
      const { apiVersion: _a, kind: _k, ...doc } = parse(config(kind)) as Record<string, unknown>;
      // Every leaf of the file lies under exactly one planned field (the map may stop above a leaf:
      // logging.options.json inlines OutputRoutingOptions), and no field is one the map lacks.
      for (const leaf of leaves(doc))
        expect(
          plan.fields.filter((f) => leaf === f.key || leaf.startsWith(`${f.key}.`)).length,
          `${c} ${leaf}`,
        ).toBe(1);
      expect(
        plan.fields.filter((f) => !(f.from?.registeredAt && f.to?.registeredAt)).map((f) => f.key),
        `${c}: every field cited at both tags`,
      ).toEqual([]);
      expect(
        plan.fields
          .filter((f) => f.status === 'removed' || f.status === 'renamed')
          .map((f) => f.key),
        c,
      ).toEqual([]);
    }
    // kubeadm's KubeletConfiguration leaves memoryThrottlingFactor unset, so its default change is reported for kubeadm's node too.
    expect(
      p.components.find((x) => x.component === 'kubelet')!.unsetDefaults?.map((d) => d.key),
    ).toContain('memoryThrottlingFactor');
  });

  it("a kubelet flag v1.37.2 removed, passed through kubeadm's kubeletExtraArgs, is blocking with both citations", () => {
    const p = planOfCommands(
      captured.commands,
      'v1.36.3',
      'v1.37.2',
      node(['--containerd=/run/containerd/containerd.sock']),
    );
    const kubelet = p.components.find((x) => x.component === 'kubelet')!;
    const row = kubelet.rows.find((r) => r.flag === 'containerd')!;
    expect([row.status, row.to]).toEqual(['removed', null]);
    // cadvisor registers it on Go's flag.CommandLine; the kubelet adopts it by name (globalflags_linux.go).
    expect(row.from?.registeredAt).toMatch(
      /^github\.com\/google\/cadvisor@v[\d.]+\/container\/containerd\/\w+\.go:\d+$/,
    );
    expect(blocking(p.components)).toContainEqual({ component: 'kubelet', name: '--containerd' });
  });
});

describe('the same flags on the kubeadm plane', () => {
  it("the inventory's extraArgs become kubeadm's ClusterConfiguration extraArgs, certSANs kept beside them", () => {
    const params = {
      kubernetesVersion: 'v1.36.3',
      clusterName: 'c',
      nodeName: 'node1',
      advertiseAddress: '10.0.0.1',
      serviceCIDR: '10.96.0.0/12',
      podCIDR: '10.244.0.0/16',
      dnsDomain: 'cluster.local',
      extraSANs: ['api.example'],
      firstServiceIp: '10.96.0.1',
      extraArgs: {
        'kube-controller-manager': { 'concurrent-service-syncs': '2' },
        'kube-apiserver': { v: '2' },
        etcd: { 'snapshot-count': '5000' },
      },
    };
    const cluster = kubeadmConfig(params)
      .split('---\n')
      .map((d) => parse(d) as Record<string, unknown>)
      .find((d) => d.kind === 'ClusterConfiguration')!;
    expect(cluster.controllerManager).toEqual({
      extraArgs: [{ name: 'concurrent-service-syncs', value: '2' }],
    });
    expect(cluster.apiServer).toEqual({
      certSANs: ['api.example'],
      extraArgs: [{ name: 'v', value: '2' }],
    });
    expect(cluster.etcd).toEqual({
      local: { extraArgs: [{ name: 'snapshot-count', value: '5000' }] },
    });
    expect(cluster.scheduler).toBeUndefined();
  });
});

describe('--upgrade-to is checked before anything is touched', () => {
  it('refuses a bad form, a version outside the table, a skipped minor and a downgrade, each on --upgrade-to', () => {
    expect(() => checkUpgradeTarget('1.37.2', 'v1.36.3')).toThrow(
      /^--upgrade-to: "1\.37\.2" is not a version like v1\.37\.2$/,
    );
    expect(() => checkUpgradeTarget('v1.38.0', 'v1.36.3')).toThrow(
      /^--upgrade-to: v1\.38\.0 is not in the version table/,
    );
    expect(() => checkUpgradeTarget('v1.37.2', 'v1.35.0')).toThrow(
      /^--upgrade-to: v1\.37\.2 skips a minor version from v1\.35\.0/,
    );
    expect(() => checkUpgradeTarget('v1.36.3', 'v1.37.2')).toThrow(
      /^--upgrade-to: v1\.36\.3 is older than/,
    );
    expect(() => checkUpgradeTarget('v1.37.2', 'v1.36.3')).not.toThrow();
  });

  it('the CLI refuses with one line and exit 2 before it reads the inventory (a missing file is never reported)', () => {
    const r = hardwire([
      'compare',
      '--inventory',
      join(tmp, 'no-such.yaml'),
      '--state-dir',
      join(tmp, 'state'),
      '--upgrade-to',
      'v1.38.0',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(
      /^error: --upgrade-to: v1\.38\.0 is not in the version table[^\n]*$/,
    );
  });
});
