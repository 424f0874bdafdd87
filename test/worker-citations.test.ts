// The workers' citations, each re-opened here in the Go module cache. The config fields the kubelet
// and kube-proxy models set are cited by the flag map (core/flags/data: each field's declaration
// in the versioned type and where the running code reads it): every field a model sets must be there,
// with a read site, and the rendered config.yaml must carry both. The models' reasons and containerd's
// config cite source by file:line themselves (containerd has no flag map). Not in `pnpm test:unit`:
// it reads the module cache, as test/flags.test.ts does.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseInventory } from '../core/inventory/load.ts';
import { CITED_MODULES, leafKeys } from '../core/components/models/config-file.ts';
import { kubeletConfig, kubeletFields, kubeletModel } from '../core/components/models/kubelet.ts';
import {
  kubeProxyConfig,
  kubeProxyFields,
  kubeProxyModel,
} from '../core/components/models/kube-proxy.ts';
import { containerdConfig, containerdModel } from '../core/components/models/containerd.ts';
import { renderUnit } from '../core/render/systemd.ts';
import { apiserverModel } from '../core/components/models/kube-apiserver.ts';
import {
  AUTHN_CONFIG,
  AUTHN_CONFIG_PATH,
  AUTHN_CONFIG_WHY,
} from '../core/components/models/authentication-config.ts';
import { parse } from 'yaml';
import { citer } from '../core/render/citations.ts';
import { KUBECONFIGS } from '../core/pki/table.ts';
import { PINNED_KUBERNETES } from '../lib/constants.ts';
import { repoRoot } from '../lib/paths.ts';
import { modcache, moduleDir, reopen, reopenSite } from './helpers/modcache.ts';

const CONTAINERD = 'github.com/containerd/containerd/v2@v2.3.3';
const inv = parseInventory(`apiVersion: hardwire/v1
kind: Inventory
cluster: {name: c}
hosts:
  - {name: cp-0, address: 198.51.100.10}
  - {name: w-1, address: 198.51.100.21, roles: [worker]}
`);
const ctx = { inv, host: inv.hosts[1]! };
const lineOf = (root: string, file: string, line: number) =>
  reopen(join(modcache, root), file, line);

interface Site {
  module: string;
  version: string;
  file: string;
  line: number;
}
interface MapField {
  key: string;
  goField: string;
  registeredAt: Site;
  convertedAt?: Site;
  readBy: string;
  consumedAt: (Site & { selector: string })[];
}
/** The committed map's config fields, read straight from its JSON (not through core/flags/map.ts). */
function mapFields(component: string): Map<string, MapField> {
  const doc = JSON.parse(
    readFileSync(
      join(repoRoot, 'core', 'flags', 'data', PINNED_KUBERNETES, `${component}.json`),
      'utf8',
    ),
  ) as { config?: { fields: MapField[] } };
  return new Map((doc.config?.fields ?? []).map((f) => [f.key, f]));
}
const ref = (s: Site) => `${s.module}@${s.version}/${s.file}:${s.line}`;
const models = [
  { component: 'kubelet', fields: kubeletFields(ctx), render: kubeletConfig },
  { component: 'kube-proxy', fields: kubeProxyFields(ctx), render: kubeProxyConfig },
] as const;

describe("the workers' citations", () => {
  it('each config field the models set is in the flag map, with a read site; re-opened, its declaration holds its json tag and each read its selector', () => {
    let n = 0;
    for (const { component, fields } of models) {
      const map = mapFields(component);
      for (const k of fields.flatMap((f) => leafKeys(f.key, f.value))) {
        n++;
        const f = map.get(k);
        expect(f, `${component} config field ${k} is in the flag map`).toBeDefined();
        expect(f!.consumedAt.length, `${component} ${k}: read sites`).toBeGreaterThan(0);
        const decl = reopenSite(f!.registeredAt);
        expect(decl, `${component} ${k} declared at ${ref(f!.registeredAt)}`).toMatch(
          new RegExp(`^\\s*${f!.goField}\\s.*json:"${k.slice(k.lastIndexOf('.') + 1)}[",]`),
        );
        for (const r of f!.consumedAt)
          expect(reopenSite(r), `${component} ${k} read at ${ref(r)}`).toContain(
            r.selector.replace(/^\./, ''),
          );
        if (f!.convertedAt)
          expect(
            reopenSite(f!.convertedAt),
            `${component} ${k} converted at ${ref(f!.convertedAt)}`,
          ).toMatch(/\bout\.[\w.]+ = .*\bin\./);
      }
    }
    // 16 KubeletConfiguration leaves (failSwapOn is left at its default), 7 KubeProxyConfiguration ones (clientConnection.kubeconfig, conntrack.*…) on a lab container.
    expect(n).toBe(23);
  });

  it("the rendered config files cite each field's declaration and its first read site from the map; the models carry no line of their own for them", async () => {
    const cite = await citer(PINNED_KUBERNETES);
    expect(cite?.config).toBeDefined();
    for (const { component, fields, render } of models) {
      const yaml = render({ ...ctx, citeConfig: cite!.config });
      const map = mapFields(component);
      for (const k of fields.flatMap((f) => leafKeys(f.key, f.value))) {
        const f = map.get(k)!;
        expect(yaml, `${component} ${k}`).toContain(`#   ${k}: declared at ${ref(f.registeredAt)}`);
        expect(
          yaml.split('\n').find((l) => l.startsWith(`#   ${k}: `)),
          `${component} ${k}`,
        ).toContain(`read at ${ref(f.consumedAt[0]!)}`);
      }
      // A versioned type's line in a reason would be a second source for what the map cites.
      for (const f of fields)
        expect(f.why, `${component} ${f.key}`).not.toMatch(/config\/v1(alpha|beta)1\/types\.go:\d/);
    }
  });

  it('each flag of the kubelet and kube-proxy units: the options.go line it cites registers it', () => {
    for (const m of [kubeletModel(ctx), kubeProxyModel(ctx)]) {
      for (const f of m.flags) {
        const refs = [
          ...f.why.matchAll(/K (cmd\/kube[-a-z]*\/app\/(?:options\/)?options\.go):(\d+)/g),
        ];
        expect(refs, `${m.component} --${f.name}`).toHaveLength(1);
        expect(lineOf(CITED_MODULES.K, refs[0]![1]!, Number(refs[0]![2])), `--${f.name}`).toContain(
          `"${f.name}"`,
        );
      }
    }
  });

  it('every other K file:line in a worker unit or config exists, and the ones the reasons lean on say so', () => {
    const text =
      [
        { ...kubeletModel(ctx), component: 'kubelet' as const },
        { ...kubeProxyModel(ctx), component: 'kube-proxy' as const },
      ]
        .map((m) => renderUnit(m, { cluster: 'c', host: 'w-1', after: [] }))
        .join('\n') +
      [...kubeletFields(ctx), ...kubeProxyFields(ctx)].map((f) => f.why).join('\n') +
      [kubeletModel(ctx), kubeProxyModel(ctx)]
        .flatMap((m) => (m.files ?? []).map((f) => f.why))
        .join('\n');
    const refs = [...text.matchAll(/\bK ([a-z][\w./-]*\.go):(\d+)/g)];
    expect(refs.length).toBeGreaterThan(8);
    for (const [, file, line] of refs) lineOf(CITED_MODULES.K, file!, Number(line));
    const holds: [string, string][] = [
      ['pkg/auth/nodeidentifier/default.go:37', 'nodeUserNamePrefix = "system:node:"'],
      ['pkg/util/kernel/constants.go:52', 'NFTablesKubeProxyKernelVersion = "5.13"'],
      ['pkg/proxy/nftables/supported.go:48', 'knftables.New('],
      ['pkg/proxy/conntrack/sysctls.go:111', 'config.MaxPerCore != nil && *config.MaxPerCore > 0'],
      [
        'plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go:700',
        'NewClusterBinding("system:node-proxier").Users(user.KubeProxy)',
      ],
      ['pkg/kubelet/cm/pod_container_manager_linux.go:97', 'm.podPidsLimit > 0'],
      ['cmd/kubeadm/app/phases/kubelet/config.go:215', 'os.WriteFile(configFile, b, 0644)'],
      ['cmd/kubeadm/app/constants/constants.go:688', 'GetIndexedIP(svcSubnetCIDR, 10)'],
      ['pkg/proxy/nftables/proxier.go:980', 'nftables.ListElements('],
      [
        'pkg/proxy/nftables/proxier.go:1196',
        'protocol := strings.ToLower(string(svcInfo.Protocol()))',
      ],
      ['pkg/proxy/nftables/proxier.go:1039', 'tx.Delete(e)'],
    ];
    for (const [at, want] of holds) {
      const [file, line] = at.split(':');
      expect(lineOf(CITED_MODULES.K, file!, Number(line)), at).toContain(want);
    }
    // The lines a reason leans on are the ones it names (policy.go:700 is the registry's, checked below).
    for (const [at] of holds.filter(([at]) => !at.startsWith('plugin/'))) {
      const [file, line] = at.split(':');
      // `K file.go:60-80, 111` names 111 too.
      expect(text, `a worker reason cites K ${at}`).toMatch(
        new RegExp(`K ${file!.replace(/\./g, '\\.')}:[\\d, -]*\\b${line}\\b`),
      );
    }
  });

  it('containerd: each C file:line in its config and unit exists, and says what the comment says', () => {
    const text =
      containerdConfig() +
      renderUnit(
        { ...containerdModel(ctx), component: 'containerd' },
        { cluster: 'c', host: 'w-1', after: [] },
      );
    const refs = [...text.matchAll(/\bC ([a-z][\w./-]*\.go):(\d+)/g)].map(
      ([, file, line]) => `${file}:${line}`,
    );
    expect(refs).toEqual(
      expect.arrayContaining([
        'cmd/containerd/server/config/config.go:228',
        'internal/cri/config/config.go:298',
        'internal/cri/config/config.go:371',
      ]),
    );
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
    const builtIn = KUBECONFIGS.flatMap((k) =>
      k.authorizedBy.by === 'builtIn' ? [{ k, a: k.authorizedBy }] : [],
    );
    expect(builtIn.map(({ k }) => k.id)).toEqual(['controller-manager', 'scheduler', 'kube-proxy']);
    const users = readFileSync(
      join(moduleDir('k8s.io/apiserver', 'v0.36.3'), 'pkg/authentication/user/user.go'),
      'utf8',
    );
    for (const { k, a } of builtIn) {
      const line = lineOf(
        CITED_MODULES.K,
        'plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go',
        a.line,
      );
      const m = new RegExp(`NewClusterBinding\\("${a.binding}"\\)\\.Users\\(user\\.(\\w+)\\)`).exec(
        line,
      );
      expect(m, `${k.id}: policy.go:${a.line} is ${line.trim()}`).not.toBeNull();
      // The user constant the binding names is the identity's CN.
      expect(
        new RegExp(`^\\s*${m![1]}\\s*= "([^"]+)"`, 'm').exec(users)?.[1],
        `${k.id}: user.${m![1]}`,
      ).toBe(k.cn);
    }
  });
});

describe("kube-apiserver's AuthenticationConfiguration (models/authentication-config.ts)", () => {
  it('each line its file and reason cite holds what they say; the file allows anonymous requests to the health paths alone', () => {
    const text = `${AUTHN_CONFIG}\n${AUTHN_CONFIG_WHY}`;
    const holds: [string, string][] = [
      [
        'pkg/kubeapiserver/authenticator/config.go:245',
        'anonymous.NewAuthenticator(config.Anonymous.Conditions)',
      ],
      [
        'pkg/kubeapiserver/options/authentication.go:597',
        'ret.Anonymous = *ret.AuthenticationConfig.Anonymous',
      ],
    ];
    for (const [at, want] of holds) {
      const [file, line] = at.split(':');
      expect(lineOf(CITED_MODULES.K, file!, Number(line)), at).toContain(want);
      expect(text, at).toContain(`K ${at}`);
    }
    const apiserver = 'k8s.io/apiserver@v0.36.3';
    expect(text).toContain(`${apiserver}/pkg/authentication/request/anonymous/anonymous.go:37`);
    expect(lineOf(apiserver, 'pkg/authentication/request/anonymous/anonymous.go', 37)).toContain(
      '!a.allowedPaths[req.URL.Path]',
    );
    const doc = parse(AUTHN_CONFIG) as {
      apiVersion: string;
      kind: string;
      anonymous: { enabled: boolean; conditions: { path: string }[] };
    };
    expect([doc.apiVersion, doc.kind]).toEqual([
      'apiserver.config.k8s.io/v1',
      'AuthenticationConfiguration',
    ]);
    expect(doc.anonymous).toEqual({
      enabled: true,
      conditions: [{ path: '/livez' }, { path: '/readyz' }, { path: '/healthz' }],
    });
  });

  it('an anonymous-auth in the inventory drops the file and its flag: kube-apiserver refuses both together', () => {
    const withFlag = parseInventory(`apiVersion: hardwire/v1
kind: Inventory
cluster: {name: c, extraArgs: {kube-apiserver: {anonymous-auth: "false"}}}
hosts:
  - {name: cp-0, address: 198.51.100.10}
`);
    const of = (i: typeof inv) => apiserverModel({ inv: i, host: i.hosts[0]! });
    expect(of(inv).flags.find((f) => f.name === 'authentication-config')?.value).toBe(
      AUTHN_CONFIG_PATH,
    );
    expect(of(inv).files?.map((f) => f.path)).toContain(AUTHN_CONFIG_PATH);
    expect(of(withFlag).flags.map((f) => f.name)).not.toContain('authentication-config');
    expect(of(withFlag).files?.map((f) => f.path)).not.toContain(AUTHN_CONFIG_PATH);
  });
});
