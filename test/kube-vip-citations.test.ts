// kube-vip has no flag map, so its model cites where each flag is read. Each citation is re-opened
// here in the Go module cache, and checked against the flag's own registration: the cited line
// reads the config field that cmd/kube-vip.go binds the flag to. The unit's claim that
// --k8sConfigPath is read nowhere is checked the same way. Not in `pnpm test:unit`: it reads the
// module cache (fetched here if missing).
import { beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseInventory } from '../core/inventory/load.ts';
import { KUBE_VIP_MODULE, kubeVipModel } from '../core/components/models/kube-vip.ts';
import { renderUnit } from '../core/render/systemd.ts';
import type { UnitModel } from '../core/components/models/index.ts';
import { moduleDir, reopen } from './helpers/modcache.ts';
import { run } from '../lib/proc.ts';
import { goEnv } from '../core/components/binaries/go-env.ts';
import { CITES } from '../harness/drills/lose-host.ts';

const [MODULE, VERSION] = KUBE_VIP_MODULE.split('@') as [string, string];
const root = moduleDir(MODULE, VERSION);
const inv = parseInventory(`apiVersion: hardwire/v1
kind: Inventory
cluster: {name: c, apiServerVip: {address: 198.51.100.10, interface: eth0}}
hosts:
  - {name: cp-1, address: 198.51.100.11}
  - {name: cp-2, address: 198.51.100.12}
`);
const model = kubeVipModel({ inv, host: inv.hosts[0]! }) as UnitModel;

function goFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return f === 'testing' || f === 'demo' ? [] : goFiles(p);
    return f.endsWith('.go') && !f.endsWith('_test.go') ? [p] : [];
  });
}

beforeAll(async () => {
  // Hardwire's module cache (GOMODCACHE from goEnv), where `components build kube-vip` put it.
  if (!existsSync(root))
    await run('go', ['mod', 'download', KUBE_VIP_MODULE], {
      step: 'go mod download',
      env: goEnv(),
      timeoutMs: 300_000,
    });
}, 320_000);

describe("kube-vip's citations", () => {
  it('each flag is registered in cmd/kube-vip.go, and the line cited as its read reads the field it binds', () => {
    const cmd = readFileSync(join(root, 'cmd', 'kube-vip.go'), 'utf8');
    expect(model.flags.length).toBeGreaterThan(5);
    for (const f of model.flags) {
      const reg = new RegExp(`&initConfig\\.([A-Za-z.]+), "${f.name}"`).exec(cmd);
      expect(reg, `--${f.name} registered in cmd/kube-vip.go`).not.toBeNull();
      const field = reg![1]!.split('.').pop()!;
      const m = /^github\.com\/kube-vip\/kube-vip@v[\d.]+\/(.+):(\d+)$/.exec(f.readAt ?? '');
      expect(m, `--${f.name} cites ${f.readAt}`).not.toBeNull();
      expect(reopen(root, m![1]!, Number(m![2])), `--${f.name} (${field})`).toMatch(
        new RegExp(`\\.${field}\\b`),
      );
    }
  });

  it('its unit carries each citation, and the subcommand it runs is the one cited', () => {
    const unit = renderUnit(model, { cluster: 'c', host: 'cp-1', after: [] });
    for (const f of model.flags) expect(unit).toContain(`#   read at ${f.readAt}`);
    expect(unit).toMatch(/ExecStart=\/usr\/local\/bin\/kube-vip \\\n {2}# .*\n {2}manager \\\n/);
    expect(reopen(root, 'cmd/kube-vip.go', 241)).toContain('Use:   "manager"');
  });

  it("--k8sConfigPath is read only to write a static Pod's hostPath, mounted at /etc/kubernetes/admin.conf, which the manager reads: why the unit bind-mounts its own kubeconfig there", () => {
    expect(reopen(root, 'pkg/manager/manager.go', 89)).toContain('"/etc/kubernetes/admin.conf"');
    const reads = goFiles(root).flatMap((p) =>
      readFileSync(p, 'utf8')
        .split('\n')
        .flatMap((l, i) => (/\.K8sConfigFile\b/.test(l) ? [`${relative(root, p)}:${i + 1}`] : [])),
    );
    // The registration, its environment variable, and the generated manifest's hostPath: no more.
    expect(reads.sort()).toEqual([
      'cmd/kube-vip.go:145',
      'pkg/kubevip/config_environment.go:607',
      'pkg/kubevip/config_generator.go:622',
    ]);
    expect(reopen(root, 'pkg/kubevip/config_generator.go', 615)).toContain(
      'MountPath: "/etc/kubernetes/admin.conf"',
    );
    const bind = model.directives!.find((d) => d.key === 'BindReadOnlyPaths')!;
    expect(bind.value).toBe(
      '/etc/kubernetes/kube-vip.conf:/etc/kubernetes/admin.conf /etc/kubernetes/kube-vip-hosts:/etc/hosts',
    );
    // Without --autodetectcp the manager asks kubernetes:<port>, which its /etc/hosts makes this host's apiserver.
    expect(reopen(root, 'pkg/manager/manager.go', 111)).toContain('"kubernetes:%v", config.Port');
    expect(model.flags.map((f) => f.name)).not.toContain('autodetectcp');
    expect(model.files![0]!.content).toMatch(/^127\.0\.0\.1 localhost kubernetes$/m);
  });
});

describe("the drill lose-host's citations", () => {
  // What each cited line must hold, in the order the citation names its lines.
  const expects: Record<keyof typeof CITES, string[]> = {
    vip: ['run.config.LeaseDuration'],
    unknown: ['Kubelet stopped posting node status.', '50 * time.Second'],
    noSchedule: ['v1.ConditionUnknown: v1.TaintNodeUnreachable'],
    noExecute: ['taintToAdd = *UnreachableTaintTemplate'],
    podsNotReady: ['func MarkPodsNotReady('],
    eviction: ['AddWork(', 'defaultUnreachableTolerationSeconds = int64(300)'],
    reachable: ['func (nc *Controller) markNodeAsReachable('],
  };
  it('each step cites lines that hold what the step says', () => {
    for (const [key, text] of Object.entries(CITES) as [keyof typeof CITES, string][]) {
      const refs = [...text.matchAll(/(\S+)@(v[\d.]+)\/(\S+?):(\d+)/g)];
      expect(refs.length, key).toBe(expects[key].length);
      refs.forEach((m, i) => {
        if (m[1] !== MODULE && m[1] !== 'k8s.io/kubernetes') throw new Error(`${key}: ${m[1]}`);
        expect(reopen(moduleDir(m[1]!, m[2]!), m[3]!, Number(m[4])), `${key}: ${m[0]}`).toContain(
          expects[key][i],
        );
      });
    }
  });
});
