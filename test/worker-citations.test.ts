// The workers' models cite Kubernetes and containerd source by file:line themselves (the flag map has
// no kubelet, kube-proxy or containerd data). Each citation is re-opened here in the Go module cache:
// the line must hold what the model says it does. Not in `pnpm test:unit`: it reads the module cache,
// as test/flags.test.ts does.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseInventory } from '../core/inventory/load.ts';
import { CITED_MODULES, type Cite } from '../core/components/models/config-file.ts';
import { kubeletFields, kubeletModel } from '../core/components/models/kubelet.ts';
import { kubeProxyFields, kubeProxyModel } from '../core/components/models/kube-proxy.ts';
import { containerdConfig, containerdModel } from '../core/components/models/containerd.ts';
import { renderUnit } from '../core/render/systemd.ts';
import { KUBECONFIGS } from '../core/pki/table.ts';

const modcache = process.env.GOMODCACHE ?? join(homedir(), '.cache', 'hardwire', 'gomod');
const CONTAINERD = 'github.com/containerd/containerd/v2@v2.3.3';
const inv = parseInventory(`apiVersion: hardwire/v1
kind: Inventory
cluster: {name: c}
hosts:
  - {name: cp-0, address: 198.51.100.10}
  - {name: w-1, address: 198.51.100.21, roles: [worker]}
`);
const ctx = { inv, host: inv.hosts[1]! };

function lineOf(moduleDir: string, file: string, line: number): string {
  const path = join(modcache, moduleDir, file);
  expect(existsSync(path), path).toBe(true);
  const text = readFileSync(path, 'utf8').split('\n')[line - 1];
  expect(text, `${path}:${line}`).toBeDefined();
  return text!;
}

const check = (c: Cite) => expect(lineOf(CITED_MODULES[c.mod], c.file, c.line), `${c.mod} ${c.file}:${c.line}`).toContain(c.holds);

describe('the workers\' citations', () => {
  it('each KubeletConfiguration and KubeProxyConfiguration field: its cited line declares or reads it', () => {
    const fields = [...kubeletFields(ctx), ...kubeProxyFields(ctx)];
    expect(fields.length).toBeGreaterThan(15);
    for (const f of fields) check(f.cite);
  });

  it('each flag of the kubelet and kube-proxy units: the options.go line it cites registers it', () => {
    for (const m of [kubeletModel(ctx), kubeProxyModel(ctx)]) {
      for (const f of m.flags) {
        const refs = [...f.why.matchAll(/K (cmd\/kube[-a-z]*\/app\/(?:options\/)?options\.go):(\d+)/g)];
        expect(refs, `${m.component} --${f.name}`).toHaveLength(1);
        expect(lineOf(CITED_MODULES.K, refs[0]![1]!, Number(refs[0]![2])), `--${f.name}`).toContain(`"${f.name}"`);
      }
    }
  });

  it('every other K file:line in a worker unit or config exists, and the ones the reasons lean on say so', () => {
    const text = [{ ...kubeletModel(ctx), component: 'kubelet' as const }, { ...kubeProxyModel(ctx), component: 'kube-proxy' as const }].map((m) => renderUnit(m, { cluster: 'c', host: 'w-1', after: [] })).join('\n')
      + [...kubeletFields(ctx), ...kubeProxyFields(ctx)].map((f) => f.why).join('\n')
      + [kubeletModel(ctx), kubeProxyModel(ctx)].flatMap((m) => (m.files ?? []).map((f) => f.why)).join('\n');
    const refs = [...text.matchAll(/\b(K|KB|KP|CB) ([a-z][\w./-]*\.go):(\d+)/g)];
    expect(refs.length).toBeGreaterThan(8);
    for (const [, mod, file, line] of refs) lineOf(CITED_MODULES[mod as Cite['mod']], file!, Number(line));
    const holds: [string, string][] = [
      ['pkg/auth/nodeidentifier/default.go:37', 'nodeUserNamePrefix = "system:node:"'],
      ['pkg/util/kernel/constants.go:52', 'NFTablesKubeProxyKernelVersion = "5.13"'],
      ['pkg/proxy/nftables/supported.go:48', 'knftables.New('],
      ['pkg/proxy/conntrack/sysctls.go:111', 'config.MaxPerCore != nil && *config.MaxPerCore > 0'],
      ['plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go:700', 'NewClusterBinding("system:node-proxier").Users(user.KubeProxy)'],
      ['pkg/kubelet/cm/pod_container_manager_linux.go:97', 'm.podPidsLimit > 0'],
      ['cmd/kubeadm/app/phases/kubelet/config.go:215', 'os.WriteFile(configFile, b, 0644)'],
    ];
    for (const [at, want] of holds) {
      const [file, line] = at.split(':');
      expect(lineOf(CITED_MODULES.K, file!, Number(line)), at).toContain(want);
    }
  });

  it('containerd: each C file:line in its config and unit exists, and says what the comment says', () => {
    const text = containerdConfig() + renderUnit({ ...containerdModel(ctx), component: 'containerd' }, { cluster: 'c', host: 'w-1', after: [] });
    const refs = [...text.matchAll(/\bC ([a-z][\w./-]*\.go):(\d+)/g)].map(([, file, line]) => `${file}:${line}`);
    expect(refs).toEqual(expect.arrayContaining(['cmd/containerd/server/config/config.go:228', 'internal/cri/config/config.go:298', 'internal/cri/config/config.go:371']));
    const holds: Record<string, string> = {
      'cmd/containerd/server/config/config.go:228': 'func serviceMigrate',
      'defaults/defaults_linux.go:21': 'DefaultAddress = "/run/containerd/containerd.sock"',
      'internal/cri/config/config.go:298': 'PinnedImages',
      'internal/cri/config/config.go:371': 'RestrictOOMScoreAdj',
      'internal/cri/config/config_unix.go:63': 'BinaryName',
      'internal/cri/config/config.go:163': 'toml:"bin_dirs"',
      'cmd/containerd/command/notify_systemd.go:31': 'SdNotifyReady',
      'version/version.go:41': 'ConfigVersion = 4',
    };
    for (const r of refs) {
      const [file, line] = r.split(':');
      expect(holds[r], `no expectation for C ${r}`).toBeDefined();
      expect(lineOf(CONTAINERD, file!, Number(line)), r).toContain(holds[r]);
    }
    expect(containerdConfig()).toMatch(/^version = 4$/m);
  });

  it('each identity authorized by a built-in binding: the cited line of the pinned RBAC bootstrap policy binds that binding to its CN', () => {
    const builtIn = KUBECONFIGS.flatMap((k) => (k.authorizedBy.by === 'builtIn' ? [{ k, a: k.authorizedBy }] : []));
    expect(builtIn.map(({ k }) => k.id)).toEqual(['controller-manager', 'scheduler', 'kube-proxy']);
    const users = readFileSync(join(modcache, 'k8s.io/apiserver@v0.36.3/pkg/authentication/user/user.go'), 'utf8');
    for (const { k, a } of builtIn) {
      const line = lineOf(CITED_MODULES.K, 'plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go', a.line);
      const m = new RegExp(`NewClusterBinding\\("${a.binding}"\\)\\.Users\\(user\\.(\\w+)\\)`).exec(line);
      expect(m, `${k.id}: policy.go:${a.line} is ${line.trim()}`).not.toBeNull();
      // The user constant the binding names is the identity's CN.
      expect(new RegExp(`^\\s*${m![1]}\\s*= "([^"]+)"`, 'm').exec(users)?.[1], `${k.id}: user.${m![1]}`).toBe(k.cn);
    }
  });
});
