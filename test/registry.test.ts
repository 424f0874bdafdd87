// The component registry: what derives from it, and what adding a component costs. The second part
// copies the source tree, adds a test-only component the way docs/adding-a-component.md says (its
// spec, its model, one line in the registry), and checks that every list of components picked it up.
import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import {
  COMPONENT_NAMES,
  LEASES,
  STAGES,
  binariesFor,
  componentsOn,
  flagTargets,
} from '../core/components/registry/index.ts';
import { parseInventory } from '../core/inventory/load.ts';
import { validateInventory } from '../core/validate/inventory.ts';
import { repoRoot } from '../lib/paths.ts';
import { tempDir } from './helpers/tmp.ts';

describe('registry', () => {
  it("derives each host's components and binaries from the roles", () => {
    const both = { isEtcd: true, isControlPlane: true };
    expect(componentsOn(both)).toEqual([
      'etcd',
      'kube-apiserver',
      'kube-controller-manager',
      'kube-scheduler',
    ]);
    expect(componentsOn({ isEtcd: true, isControlPlane: false })).toEqual(['etcd']);
    expect(componentsOn({ isEtcd: false, isControlPlane: true })).toEqual([
      'kube-apiserver',
      'kube-controller-manager',
      'kube-scheduler',
    ]);
    expect(componentsOn({ isEtcd: false, isControlPlane: false, isWorker: true })).toEqual([
      'containerd',
      'kubelet',
      'kube-proxy',
    ]);
    expect(componentsOn({ isEtcd: true, isControlPlane: true, isWorker: true })).toEqual([
      'etcd',
      'kube-apiserver',
      'kube-controller-manager',
      'kube-scheduler',
      'containerd',
      'kubelet',
      'kube-proxy',
    ]);
    expect(binariesFor(both)).toEqual([
      { name: 'etcd', readBy: ['etcd'] },
      { name: 'etcdctl', readBy: [] },
      { name: 'etcdutl', readBy: [] },
      { name: 'kube-apiserver', readBy: ['kube-apiserver'] },
      { name: 'kube-controller-manager', readBy: ['kube-controller-manager'] },
      { name: 'kube-scheduler', readBy: ['kube-scheduler'] },
    ]);
  });

  it('orders the start stages and names the leader Leases', () => {
    expect(STAGES).toEqual([
      { id: 'etcd', components: ['etcd'] },
      { id: 'kube-apiserver', components: ['kube-apiserver'] },
      { id: 'vip', components: ['kube-vip'] },
      { id: 'controllers', components: ['kube-controller-manager', 'kube-scheduler'] },
      { id: 'containerd', components: ['containerd'] },
      { id: 'registry', components: ['registry'] },
      { id: 'workers', components: ['kubelet', 'kube-proxy'] },
    ]);
    expect(LEASES).toEqual([
      { component: 'kube-vip', lease: 'plndr-cp-lock' },
      { component: 'kube-controller-manager', lease: 'kube-controller-manager' },
      { component: 'kube-scheduler', lease: 'kube-scheduler' },
    ]);
  });

  it("gives the flag map its analyzer targets, each imported by its module's targets.go (which keeps it in that go.mod)", () => {
    expect(flagTargets().map((t) => [t.name, t.dir])).toEqual([
      ['etcd', 'etcd'],
      ['kube-apiserver', '.'],
      ['kube-controller-manager', '.'],
      ['kube-scheduler', '.'],
      ['kubelet', 'node'],
      ['kube-proxy', 'node'],
    ]);
    for (const t of flagTargets()) {
      const imports = readFileSync(
        join(repoRoot, 'harness', 'flags', 'analyzer', t.dir, 'targets.go'),
        'utf8',
      );
      for (const p of t.patterns)
        expect(imports, `${t.name}: ${p} in flags/analyzer/${t.dir}/targets.go`).toContain(
          `_ "${p}"`,
        );
    }
  });

  it('gives the inventory its extraArgs keys, and refuses any other', () => {
    // The validate step checks the names (inventory/ checks structure only); JSON is YAML.
    const doc = (extraArgs: unknown) =>
      JSON.stringify({
        apiVersion: 'hardwire/v1',
        kind: 'Inventory',
        cluster: { name: 'x', extraArgs },
        hosts: [{ name: 'a', address: '10.0.0.1', roles: ['etcd', 'control-plane'] }],
      });
    for (const c of COMPONENT_NAMES)
      expect(() => validateInventory(parseInventory(doc({ [c]: {} }))), c).not.toThrow();
    expect(() =>
      validateInventory(parseInventory(doc({ 'cloud-controller-manager': { v: '2' } }))),
    ).toThrow(
      /^cluster\.extraArgs\.cloud-controller-manager: unknown component; valid names are etcd, kube-apiserver/,
    );
    expect(() => parseInventory(doc({ 'cloud-controller-manager': { v: '2' } }))).not.toThrow();
  });
});

const SPEC = `import { demoModel } from '../models/demo-sidecar.ts';
import { readyzGate } from './gates.ts';
import { kubeCommand, type ComponentSpec } from './types.ts';

export const demoSidecar = {
  name: 'demo-sidecar',
  role: 'control-plane',
  binaries: { 'demo-sidecar': { group: 'kubernetes', goPackage: 'example.com/demo-sidecar', probe: { args: ['--version'], expect: (v: string) => v }, why: 'test-only' } },
  model: demoModel,
  flagTarget: kubeCommand('.', 'demo-sidecar', 'NewDemoCommand'),
  kubeconfig: { id: 'demo-sidecar', file: 'demo-sidecar.conf', cn: 'system:demo-sidecar', o: [], server: 'local', why: 'test-only', authorizedBy: { by: 'wire', binding: 'demo' } },
  gate: { ...readyzGate, checks: () => [{ name: 'demo-sidecar: answers', run: async () => 'ok' }] },
  listens: [],
  order: 35,
  stage: 'demo',
  upgradeStep: 'controllers',
  lease: 'demo-sidecar',
} as const satisfies ComponentSpec<'demo-sidecar'>;
`;

const MODEL = `import { flag, K, BIN, type ModelContext, type UnitModel } from './types.ts';

export function demoModel({ inv }: ModelContext): UnitModel {
  return {
    component: 'demo-sidecar', description: 'demo sidecar (test-only)', documentation: 'https://example.com', type: 'simple',
    binary: \`\${BIN}/demo-sidecar\`,
    flags: [flag('kubeconfig', \`\${K}/demo-sidecar.conf\`, 'reads the API as itself'), flag('cluster-name', inv.cluster.name, 'test')],
  };
}
`;

// Runs inside the copy: every list that names components, read through the modules that use it.
const CHECK = `
import { COMPONENT_NAMES, LEASES, STAGES, BINARIES, binariesFor, componentsOn, COMPONENTS, flagTargets } from './core/components/registry/index.ts';
import { START_PHASES } from './core/apply/phases/start.ts';
import { COMPONENTS as COMPARED } from './harness/planes/types.ts';
import { flagComponents } from './core/flags/map.ts';
import { loadValidInventory as loadInventory } from './core/validate/inventory.ts';
import { ensurePki, pkiDir } from './core/pki/store.ts';
import { renderHostTree } from './core/render/host-tree.ts';
import { remoteCerts } from './core/certs/catalog.ts';
const inv = loadInventory(process.argv[2]);
await ensurePki(process.argv[3], inv);
const cp = inv.hosts.find((h) => h.name === 'cp')!;
const tree = renderHostTree(inv, cp, pkiDir(process.argv[3], inv));
const unit = tree.files.find((f) => f.path === '/etc/systemd/system/demo-sidecar.service');
console.log(JSON.stringify({
  names: COMPONENT_NAMES, compared: COMPARED, flagComponents, analyzed: flagTargets().map((t) => [t.name, t.root]),
  onCp: componentsOn(cp), onEtcdOnly: componentsOn({ isEtcd: true, isControlPlane: false }),
  binaries: binariesFor(cp), goPackage: BINARIES['demo-sidecar']?.goPackage,
  stages: STAGES.map((s) => s.id), startPhases: START_PHASES.map((p) => p.id), leases: LEASES.map((l) => l.lease),
  checks: COMPONENTS.flatMap((c) => c.gate.checks({ inv } as never).map((x) => x.name)),
  unit: unit?.content.toString(), unitReadBy: unit?.readBy,
  confReadBy: tree.files.find((f) => f.path === '/etc/kubernetes/demo-sidecar.conf')?.readBy,
  confCert: remoteCerts(inv, cp).find((c) => c.path === '/etc/kubernetes/demo-sidecar.conf'),
  extraArg: tree.models.find((m) => m.component === 'demo-sidecar')?.flags.find((f) => f.name === 'v')?.value,
  certs: remoteCerts(inv, cp).length,
}));
`;

const INVENTORY = `apiVersion: hardwire/v1
kind: Inventory
cluster:
  name: demo
  extraArgs:
    demo-sidecar: {v: "4"}
hosts:
  - {name: cp, address: 198.51.100.20, roles: [etcd, control-plane]}
`;

/** The files whose per-component tables need a row for a new control-plane component with a flag map. */
const PER_COMPONENT_TABLES = [
  'core/flags/gates.ts', // the feature-gate tables its binary registers
  'core/validate/cis-checks.ts', // kube-bench's variable for its process
  'core/validate/extra-args.ts', // flags hardwire derives, refused in extraArgs
  'harness/planes/cert-roles.ts', // the flags naming a certificate (k0s's plane, a cluster of yours)
  'harness/planes/kubeadm-extra-args.ts', // where kubeadm's ClusterConfiguration takes its extraArgs
  'harness/planes/kubeadm.ts', // kubeadm's command builder for it
  'harness/prove/foreign/kubeadm.ts', // kubeadm's phase and manifest
  'harness/prove/index.ts', // how to prove it, or why not yet
];

const sha = (f: string) => createHash('sha256').update(readFileSync(f)).digest('hex');

describe('adding a component (docs/adding-a-component.md)', () => {
  it('takes its spec, its model and one line in the registry, and every list picks it up', () => {
    const work = tempDir('hardwire-addcomp-');
    const copy = join(work, 'src');
    const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], {
      cwd: repoRoot,
      encoding: 'utf8',
    })
      .split('\n')
      .filter(
        (f) =>
          f.endsWith('.ts') || f.endsWith('.hbs') || f.endsWith('.json') || f.endsWith('.yaml'),
      );
    for (const f of files) {
      mkdirSync(join(copy, f, '..'), { recursive: true });
      try {
        cpSync(join(repoRoot, f), join(copy, f));
      } catch {
        /* deleted in the work tree */
      }
    }
    symlinkSync(join(repoRoot, 'node_modules'), join(copy, 'node_modules'));
    const before = new Map(
      files.map((f) => {
        try {
          return [f, sha(join(copy, f))];
        } catch {
          return [f, ''];
        }
      }),
    );

    // The three edits, and nothing else.
    writeFileSync(join(copy, 'core/components/registry/demo-sidecar.ts'), SPEC);
    writeFileSync(join(copy, 'core/components/models/demo-sidecar.ts'), MODEL);
    const index = join(copy, 'core/components/registry/index.ts');
    const text = readFileSync(index, 'utf8');
    const edit = (from: string, to: string, t: string) => {
      expect(t, `registry/index.ts no longer has ${JSON.stringify(from)}`).toContain(from);
      return t.replace(from, to);
    };
    const edited = edit(
      '  kubeScheduler,\n',
      '  kubeScheduler,\n  demoSidecar,\n',
      edit(
        "import { kubeScheduler } from './kube-scheduler.ts';",
        "import { kubeScheduler } from './kube-scheduler.ts';\nimport { demoSidecar } from './demo-sidecar.ts';",
        text,
      ),
    );
    writeFileSync(index, edited);

    const touched = [...before]
      .filter(([f, h]) => h !== '' && sha(join(copy, f)) !== h)
      .map(([f]) => f);
    expect(touched).toEqual(['core/components/registry/index.ts']);

    // tsc names each per-component table the new component lacks a row in, and nothing else: the
    // rows a component needs beyond its spec and model are asked for, never left to a default.
    const tsc = spawnSync(
      process.execPath,
      ['node_modules/typescript/bin/tsc', '--noEmit', '--pretty', 'false', '-p', '.'],
      { cwd: copy, encoding: 'utf8' },
    );
    expect(tsc.status, tsc.stdout).not.toBe(0);
    const errors = tsc.stdout.split('\n').filter((l) => /: error TS/.test(l));
    expect(
      errors.filter((l) => !/'"demo-sidecar"' is missing/.test(l)),
      'errors other than a missing demo-sidecar row',
    ).toEqual([]);
    expect([...new Set(errors.map((l) => l.replace(/\(.*$/, '')))].sort()).toEqual(
      PER_COMPONENT_TABLES,
    );

    writeFileSync(join(copy, 'check.ts'), CHECK);
    writeFileSync(join(work, 'inv.yaml'), INVENTORY);
    const out = JSON.parse(
      execFileSync(process.execPath, ['check.ts', join(work, 'inv.yaml'), join(work, 'state')], {
        cwd: copy,
        encoding: 'utf8',
      }),
    ) as Record<string, unknown>;

    expect(out.names).toEqual([
      'etcd',
      'kube-apiserver',
      'kube-vip',
      'kube-controller-manager',
      'kube-scheduler',
      'demo-sidecar',
      'containerd',
      'registry',
      'kubelet',
      'kube-proxy',
    ]);
    // compare covers the control plane (the node joins it with issue 23).
    const started = [
      'etcd',
      'kube-apiserver',
      'kube-controller-manager',
      'kube-scheduler',
      'demo-sidecar',
    ];
    expect(out.compared).toEqual(started);
    // The flag map covers what has a flagTarget (containerd has none), and the analyzer's list is the registry's.
    expect(out.flagComponents).toEqual([...started, 'kubelet', 'kube-proxy']);
    expect(out.analyzed).toContainEqual([
      'demo-sidecar',
      'k8s.io/kubernetes/cmd/demo-sidecar/app.NewDemoCommand',
    ]);
    expect((out.analyzed as string[][]).map(([n]) => n)).toEqual(out.flagComponents);
    expect(out.onCp).toContain('demo-sidecar');
    expect(out.onEtcdOnly).toEqual(['etcd']);
    expect(out.binaries).toContainEqual({ name: 'demo-sidecar', readBy: ['demo-sidecar'] });
    expect(out.goPackage).toBe('example.com/demo-sidecar');
    expect(out.stages).toEqual([
      'etcd',
      'kube-apiserver',
      'vip',
      'controllers',
      'demo',
      'containerd',
      'registry',
      'workers',
    ]);
    expect(out.startPhases).toEqual(out.stages);
    expect(out.leases).toEqual([
      'plndr-cp-lock',
      'kube-controller-manager',
      'kube-scheduler',
      'demo-sidecar',
    ]);
    expect(out.checks).toContain('demo-sidecar: answers');
    expect(out.unit).toMatch(/ExecStart=\/usr\/local\/bin\/demo-sidecar/);
    expect(out.unit).toMatch(/--kubeconfig=\/etc\/kubernetes\/demo-sidecar\.conf/);
    expect(out.unitReadBy).toEqual(['demo-sidecar']);
    // The kubeconfig identity in the spec is issued, placed on its hosts, read by it, and checked by certs check.
    expect(out.confReadBy).toEqual(['demo-sidecar']);
    expect(out.confCert).toMatchObject({
      name: 'demo-sidecar.conf',
      leafId: 'kubeconfig-demo-sidecar',
      embedded: true,
    });
    // The inventory's extraArgs accepts the new key and it reaches the model.
    expect(out.extraArg).toBe('4');
  }, 120_000);
});
