// upgrade apply (issue 24), without hosts: the pure step list (the dry run's content) from what
// each host runs and which of the target's files it lacks, and apply's refusals (exit 2, one line,
// before any host is dialled).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import {
  formatSteps,
  upgradeSteps,
  type HostInput,
  type StepInput,
} from '../core/upgrade/steps.ts';
import type { ComponentName } from '../core/components/registry/index.ts';
import type { FileChange } from '../core/plan/types.ts';
import { hardwire } from './helpers/cli.ts';
import { rollPhase } from '../core/upgrade/apply/phases/roll.ts';
import type { WireContext } from '../core/apply/context.ts';
import { repoRoot } from '../lib/paths.ts';
import { applyEtcdPath } from '../core/upgrade/etcd-target.ts';
import { retarget } from '../core/upgrade/apply/phases/hop-binaries.ts';
import { etcdVersions } from '../core/components/binaries/catalog.ts';
import type { UpgradeRun } from '../core/upgrade/apply/state.ts';

const CP: ComponentName[] = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'];
const bin = (name: string, readBy: ComponentName[]): FileChange => ({
  path: `/usr/local/bin/${name}`,
  mode: 0o755,
  sha256: `${name}-new`,
  readBy,
  kind: 'binary',
  reason: 'changed',
});
const unit = (c: ComponentName): FileChange => ({
  path: `/etc/systemd/system/${c}.service`,
  mode: 0o644,
  sha256: `${c}-unit`,
  readBy: [c],
  kind: 'file',
  reason: 'changed',
});
const ALL_CHANGES = [
  bin('etcd', ['etcd']),
  bin('etcdctl', []),
  unit('etcd'),
  ...CP.slice(1).flatMap((c) => [bin(c, [c]), unit(c)]),
];
const OLD = {
  etcd: 'v3.6.8',
  'kube-apiserver': 'other',
  'kube-controller-manager': 'other',
  'kube-scheduler': 'other',
} as const;

function input(hosts: Partial<HostInput>[], etcdPath = ['v3.6.16', 'v3.7.0']): StepInput {
  return {
    hosts: hosts.map((h, i) => ({
      host: `node${i + 1}`,
      components: CP,
      changes: ALL_CHANGES,
      running: OLD,
      ...h,
    })),
    etcdPath,
    hopFiles: (v) =>
      ['etcd', 'etcdctl', 'etcdutl'].map((n) => ({
        path: `/usr/local/bin/${n}`,
        mode: 0o755,
        sha256: `${n}-${v}`,
        readBy: n === 'etcd' ? ['etcd' as const] : [],
        kind: 'binary' as const,
      })),
    ownerOf: (p) => (p.startsWith('/usr/local/bin/etcd') ? 'etcd' : undefined),
  };
}

const brief = (s: ReturnType<typeof upgradeSteps>) =>
  s.map((x) => `${x.host} ${x.restart.join('+')} ${x.version}`);

describe('upgrade steps', () => {
  const steps = upgradeSteps(input([{}, {}, {}]), 'v1.37.2');

  it('every etcd member through v3.6.16 before any takes v3.7.0, then each component one host at a time', () => {
    expect(brief(steps)).toEqual([
      'node1 etcd etcd v3.6.16',
      'node2 etcd etcd v3.6.16',
      'node3 etcd etcd v3.6.16',
      'node1 etcd etcd v3.7.0',
      'node2 etcd etcd v3.7.0',
      'node3 etcd etcd v3.7.0',
      'node1 kube-apiserver v1.37.2',
      'node2 kube-apiserver v1.37.2',
      'node3 kube-apiserver v1.37.2',
      'node1 kube-controller-manager+kube-scheduler v1.37.2',
      'node2 kube-controller-manager+kube-scheduler v1.37.2',
      'node3 kube-controller-manager+kube-scheduler v1.37.2',
    ]);
  });

  it('the lab registry, like containerd, restarts in the node step only for a file of its own, never for its version', () => {
    const withRegistry = (changes: FileChange[]) =>
      brief(
        upgradeSteps(
          input([
            { components: [...CP, 'registry'], changes, running: { ...OLD, registry: 'other' } },
          ]),
          'v1.37.2',
        ),
      ).filter((l) => l.includes('registry'));
    expect(withRegistry(ALL_CHANGES)).toEqual([]);
    expect(withRegistry([...ALL_CHANGES, unit('registry')])).toEqual(['node1 registry v1.37.2']);
  });

  it("a hop writes only that hop's binaries; the last hop the target's etcd files; each file goes with its first reader", () => {
    expect(steps[0]!.files.map((f) => `${f.path} ${f.sha256}`)).toEqual([
      '/usr/local/bin/etcd etcd-v3.6.16',
      '/usr/local/bin/etcdctl etcdctl-v3.6.16',
      '/usr/local/bin/etcdutl etcdutl-v3.6.16',
    ]);
    expect(steps[3]!.files.map((f) => f.path)).toEqual([
      '/usr/local/bin/etcd',
      '/usr/local/bin/etcdctl',
      '/etc/systemd/system/etcd.service',
    ]);
    expect(steps[6]!.files.map((f) => f.path)).toEqual([
      '/usr/local/bin/kube-apiserver',
      '/etc/systemd/system/kube-apiserver.service',
    ]);
    // Every target file is written exactly once per host.
    for (const h of ['node1', 'node2', 'node3']) {
      const written = steps
        .filter((s) => s.host === h && !s.version.endsWith('v3.6.16'))
        .flatMap((s) => s.files.map((f) => f.path));
      expect(written.sort()).toEqual(ALL_CHANGES.map((c) => c.path).sort());
    }
  });

  it('resumes from what the hosts run: node1 done, node2 half-way through etcd, node3 untouched', () => {
    const done = {
      etcd: 'v3.7.0',
      'kube-apiserver': 'target',
      'kube-controller-manager': 'target',
      'kube-scheduler': 'target',
    } as const;
    const s = upgradeSteps(
      input([{ running: done, changes: [] }, { running: { ...OLD, etcd: 'v3.6.16' } }, {}]),
      'v1.37.2',
    );
    expect(brief(s)).toEqual([
      'node3 etcd etcd v3.6.16',
      'node2 etcd etcd v3.7.0',
      'node3 etcd etcd v3.7.0',
      'node2 kube-apiserver v1.37.2',
      'node3 kube-apiserver v1.37.2',
      'node2 kube-controller-manager+kube-scheduler v1.37.2',
      'node3 kube-controller-manager+kube-scheduler v1.37.2',
    ]);
  });

  it('a rolled-back host (old process, target files already written elsewhere) gets its step again; a finished cluster gets none', () => {
    const done = {
      etcd: 'v3.7.0',
      'kube-apiserver': 'target',
      'kube-controller-manager': 'target',
      'kube-scheduler': 'target',
    } as const;
    const s = upgradeSteps(
      input([
        { running: done, changes: [] },
        { running: { ...done, 'kube-apiserver': 'other' }, changes: [unit('kube-apiserver')] },
        { running: done, changes: [] },
      ]),
      'v1.37.2',
    );
    expect(brief(s)).toEqual(['node2 kube-apiserver v1.37.2']);
    expect(upgradeSteps(input([{ running: done, changes: [] }]), 'v1.37.2')).toEqual([]);
    expect(formatSteps([])).toMatch(/nothing to upgrade/);
  });

  it('the dry run lists every write and restart of each step', () => {
    const text = formatSteps(steps);
    expect(text).toContain('1. [node1] etcd → etcd v3.6.16 (runs etcd v3.6.8)');
    expect(text).toContain('     write /usr/local/bin/kube-apiserver (changed)');
    expect(text.match(/systemctl restart kube-apiserver\.service/g)).toHaveLength(3);
  });
});

describe('upgrade apply --etcd-to VERSION: the path plan lists, then the steps', () => {
  // The versions the build table has, and etcd's rule (3.6.11 or later before 3.7, one minor at a time), spelled here.
  const KNOWN = ['v3.6.8', 'v3.6.16', 'v3.7.0'];
  const etcdSteps = (s: ReturnType<typeof upgradeSteps>) =>
    s.filter((x) => x.restart.includes('etcd')).map((x) => `${x.host} ${x.version}`);

  it('the default target and --etcd-to v3.7.0: every member to v3.6.16 (>= 3.6.11), then every member to v3.7.0', () => {
    expect(etcdVersions().sort()).toEqual([...KNOWN].sort());
    const path = applyEtcdPath('v3.6.8', 'v3.7.0', KNOWN);
    expect(path).toEqual(['v3.6.16', 'v3.7.0']);
    expect(etcdSteps(upgradeSteps(input([{}, {}, {}], path), 'v1.37.2'))).toEqual([
      'node1 etcd v3.6.16',
      'node2 etcd v3.6.16',
      'node3 etcd v3.6.16',
      'node1 etcd v3.7.0',
      'node2 etcd v3.7.0',
      'node3 etcd v3.7.0',
    ]);
  });

  it("--etcd-to v3.6.16: one hop, whose files are the target's etcd files; the Kubernetes steps unchanged", () => {
    const path = applyEtcdPath('v3.6.8', 'v3.6.16', KNOWN);
    expect(path).toEqual(['v3.6.16']);
    const s = upgradeSteps(input([{}, {}, {}], path), 'v1.37.2');
    expect(etcdSteps(s)).toEqual([
      'node1 etcd v3.6.16',
      'node2 etcd v3.6.16',
      'node3 etcd v3.6.16',
    ]);
    expect(s[0]!.files.map((f) => `${f.path} ${f.reason}`)).toEqual([
      '/usr/local/bin/etcd changed',
      '/usr/local/bin/etcdctl changed',
      '/etc/systemd/system/etcd.service changed',
    ]);
    expect(brief(s.slice(3))).toEqual(brief(upgradeSteps(input([{}, {}, {}]), 'v1.37.2').slice(6)));
  });

  it('a re-run to v3.7.0 after --etcd-to v3.6.16 does only the last hop; a lower --etcd-to than a member runs is refused', () => {
    const at3616 = { ...OLD, etcd: 'v3.6.16' };
    const s = upgradeSteps(
      input(
        [{ running: at3616 }, { running: at3616 }, { running: at3616 }],
        applyEtcdPath('v3.6.8', 'v3.7.0', KNOWN),
      ),
      'v1.37.2',
    );
    expect(etcdSteps(s)).toEqual(['node1 etcd v3.7.0', 'node2 etcd v3.7.0', 'node3 etcd v3.7.0']);
    expect(() =>
      upgradeSteps(input([{}, { running: { ...OLD, etcd: 'v3.7.0' } }], ['v3.6.16']), 'v1.37.2'),
    ).toThrow(
      /^--etcd-to: etcd member node2 runs v3\.7\.0, newer than v3\.6\.16: an upgrade does not downgrade etcd/,
    );
  });

  it('refuses, as plan does, a version not built, a skipped minor and a downgrade', () => {
    expect(() => applyEtcdPath('v3.6.8', 'v3.7.3', KNOWN)).toThrow(
      /^--etcd-to: etcd v3\.7\.3 is not in the build table/,
    );
    expect(() => applyEtcdPath('v3.6.8', 'v3.8.0', [...KNOWN, 'v3.8.0'])).toThrow(
      /^--etcd-to: etcd v3\.6\.8 → v3\.8\.0 skips a minor version/,
    );
    expect(() => applyEtcdPath('v3.6.16', 'v3.6.8', KNOWN)).toThrow(
      /^--etcd-to: etcd v3\.6\.8 is older than the cluster's v3\.6\.16/,
    );
  });

  it("the --etcd-to target's binaries replace the table's in what each host wants (etcd's files only)", () => {
    const b = (name: string, v: string) => ({
      name,
      path: `/cache/${name}/${v}/${name}`,
      sha256: `${name}-${v}`,
      version: v,
      source: 'build',
    });
    const names = ['etcd', 'etcdctl', 'etcdutl'];
    const table = [...names.map((n) => b(n, 'v3.7.0')), b('kube-apiserver', 'v1.37.2')];
    const ctx = {
      binaries: new Map(table.map((x) => [x.name, x] as const)),
      localFiles: new Map<string, string>(),
      wants: [
        {
          host: 'node1',
          components: CP,
          files: table.map((x) => ({
            path: `/usr/local/bin/${x.name}`,
            mode: 0o755,
            sha256: x.sha256,
            readBy: [],
            kind: 'binary' as const,
          })),
        },
      ],
    };
    const run = {
      etcdPath: ['v3.6.16'],
      hops: new Map([['v3.6.16', new Map(names.map((n) => [n, b(n, 'v3.6.16')] as const))]]),
    } as unknown as UpgradeRun;
    retarget(ctx as unknown as WireContext, run);
    expect(ctx.wants[0]!.files.map((f) => f.sha256)).toEqual([
      'etcd-v3.6.16',
      'etcdctl-v3.6.16',
      'etcdutl-v3.6.16',
      'kube-apiserver-v1.37.2',
    ]);
    expect([...ctx.binaries.values()].map((x) => x.path)).toEqual([
      ...names.map((n) => `/cache/${n}/v3.6.16/${n}`),
      '/cache/kube-apiserver/v1.37.2/kube-apiserver',
    ]);
    // push finds each file by its sha256 only, so every hop binary must be findable there.
    expect([...ctx.localFiles.entries()]).toEqual(
      names.map((n) => [`${n}-v3.6.16`, `/cache/${n}/v3.6.16/${n}`]),
    );
  });
});

describe('the roll', () => {
  // The roll phase with its step runner replaced: what it proves is the order and that no two steps overlap.
  async function roll(
    failAt?: string,
  ): Promise<{ ran: string[]; maxActive: number; err?: unknown }> {
    const run = {
      to: 'v1.37.2',
      etcdPath: [],
      hops: new Map(),
      running: new Map(),
      steps: upgradeSteps(input([{}, {}, {}]), 'v1.37.2'),
      done: [],
    };
    const ran: string[] = [];
    let active = 0;
    let maxActive = 0;
    const phase = rollPhase(run, async (_ctx, step) => {
      active++;
      maxActive = Math.max(maxActive, active);
      await new Promise((r) => setTimeout(r, 5));
      active--;
      const name = `${step.host} ${step.restart.join('+')} ${step.version}`;
      if (name === failAt) throw new Error(`gate failed: ${name}`);
      ran.push(name);
    });
    const log = { info: () => {}, warn: () => {}, step: () => {} };
    const err = await phase.run({ log } as unknown as WireContext).then(
      () => undefined,
      (e: unknown) => e,
    );
    return { ran, maxActive, ...(err ? { err } : {}) };
  }

  it('runs the steps in order, never two at once (no two apiservers down together)', async () => {
    const r = await roll();
    expect(r.maxActive).toBe(1);
    expect(r.ran).toEqual(brief(upgradeSteps(input([{}, {}, {}]), 'v1.37.2')));
  });

  it('stops at the first failed step: nothing after it runs', async () => {
    const r = await roll('node2 kube-apiserver v1.37.2');
    expect(String(r.err)).toContain('gate failed: node2 kube-apiserver');
    expect(r.ran.at(-1)).toBe('node1 kube-apiserver v1.37.2');
    expect(
      r.ran.some((x) => x.startsWith('node3 kube-apiserver') || x.includes('controller')),
    ).toBe(false);
  });
});

describe('upgrade apply refuses before touching a host (exit 2, one line)', () => {
  const EXAMPLE = join(repoRoot, 'hosts/example.yaml');
  const withArgs = (extra: Record<string, Record<string, string>>, f: (file: string) => void) => {
    const dir = mkdtempSync(join(tmpdir(), 'hardwire-upgrade-apply-'));
    try {
      const inv = parse(readFileSync(EXAMPLE, 'utf8')) as {
        cluster: { extraArgs?: Record<string, Record<string, string>> };
      };
      inv.cluster.extraArgs = { ...inv.cluster.extraArgs, ...extra };
      const file = join(dir, 'inv.yaml');
      writeFileSync(file, stringify(inv));
      f(file);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('a flag v1.37.2 removed, in extraArgs', () => {
    // --concurrent-service-syncs: in v1.36.3's kube-controller-manager flag set, not v1.37.2's (test/upgrade.test.ts finds it from the data).
    withArgs({ 'kube-controller-manager': { 'concurrent-service-syncs': '1' } }, (file) => {
      const r = hardwire(['upgrade', 'apply', '--to', 'v1.37.2', '--inventory', file, '--dry-run']);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(
        /cluster\.extraArgs\.kube-controller-manager\.concurrent-service-syncs: .*registers no --concurrent-service-syncs/,
      );
    });
  });

  it('a flag etcd v3.7.0 removed, in extraArgs: refused at the second hop, cited at v3.6.16', () => {
    // --experimental-initial-corrupt-check: in etcd v3.6.8's and v3.6.16's flag sets, not v3.7.0's (test/upgrade-etcd-hops.test.ts picks such flags from the data).
    withArgs({ etcd: { 'experimental-initial-corrupt-check': 'false' } }, (file) => {
      const r = hardwire(['upgrade', 'apply', '--to', 'v1.37.2', '--inventory', file, '--dry-run']);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(
        /^error: cluster\.extraArgs\.etcd\.experimental-initial-corrupt-check: etcd v3\.7\.0 registers no --experimental-initial-corrupt-check \(removed; registered at go\.etcd\.io\/etcd\/server\/v3@v3\.6\.16\/embed\/config\.go:\d+ in v3\.6\.16\)/,
      );
    });
  });

  it('a feature gate v1.37.2 removed, in extraArgs', () => {
    // AuthorizeNodeWithSelectors: removed at 1.37 (test/upgrade-gates.test.ts cites its spec at both tags).
    withArgs(
      { 'kube-apiserver': { 'feature-gates': 'AuthorizeNodeWithSelectors=true' } },
      (file) => {
        const r = hardwire([
          'upgrade',
          'apply',
          '--to',
          'v1.37.2',
          '--inventory',
          file,
          '--dry-run',
        ]);
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr.trim().split('\n')).toHaveLength(1);
        expect(r.stderr).toMatch(
          /cluster\.extraArgs\.kube-apiserver\.feature-gates: AuthorizeNodeWithSelectors: .*registers no AuthorizeNodeWithSelectors/,
        );
      },
    );
  });

  it('--etcd-to a version plan refuses (not built; a skipped minor)', () => {
    for (const [etcd, re] of [
      ['v3.7.3', /^error: --etcd-to: etcd v3\.7\.3 is not in the build table/],
      ['v3.8.0', /^error: --etcd-to: etcd v3\.6\.8 → v3\.8\.0 skips a minor version/],
    ] as const) {
      const r = hardwire([
        'upgrade',
        'apply',
        '--to',
        'v1.37.2',
        '--etcd-to',
        etcd,
        '--inventory',
        EXAMPLE,
        '--dry-run',
      ]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(re);
    }
  });

  it('a downgrade and a skipped minor, as plan refuses them', () => {
    for (const [to, re] of [
      ['v1.35.0', /downgrade/],
      ['v1.38.0', /skips a minor/],
    ] as const) {
      const r = hardwire(['upgrade', 'apply', '--to', to, '--inventory', EXAMPLE, '--dry-run']);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(re);
    }
  });
});
