// The flag map against the real pinned source (Kubernetes v1.36.3, etcd v3.6.8). No line numbers
// here: `flags verify` checks every cited line.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  bestCitation,
  dataDir,
  explain,
  findFlag,
  flagComponents,
  flagVersions,
  loadFlagMap,
  mappedComponents,
  type FlagEntry,
} from '../core/flags/map.ts';
import { verifyFlagMaps } from '../harness/flags/verify.ts';
import { goBinary, goEnv, regenerate } from '../harness/flags/regenerate.ts';
import { regenerateEtcd } from '../harness/flags/etcd-regenerate.ts';
import { etcdDataDir, etcdGateFile, etcdMapFile, loadEtcdMap } from '../core/flags/etcd-maps.ts';
import { repoRoot } from '../lib/paths.ts';
import { recheckCitations } from './helpers/citations.ts';
import { cachedRegeneration, regenInputFiles, regenKey } from './helpers/flag-regen.ts';
import { goModCache } from '../core/components/binaries/go-env.ts';

const QUIET = { info: () => {}, warn: () => {}, step: () => {} };

function flag(component: string, name: string): FlagEntry {
  const f = findFlag(component, name);
  if (!f) throw new Error(`${component} has no --${name}`);
  return f;
}

function meaningful(f: FlagEntry) {
  return f.consumedAt.filter((r) => r.kind !== 'validation' && r.kind !== 'generated');
}

const cases: Array<{
  component: string;
  flag: string;
  regModule: string;
  regFile: string;
  field: string;
  readModule: string;
  readFile: string;
}> = [
  {
    component: 'kube-apiserver',
    flag: 'etcd-servers',
    regModule: 'k8s.io/apiserver',
    regFile: 'pkg/server/options/etcd.go',
    field: 'storagebackend.TransportConfig.ServerList',
    readModule: 'k8s.io/apiserver',
    readFile: 'pkg/storage/storagebackend/factory/etcd3.go',
  },
  {
    component: 'kube-apiserver',
    flag: 'service-account-issuer',
    regModule: 'k8s.io/kubernetes',
    regFile: 'pkg/kubeapiserver/options/authentication.go',
    field: 'options.ServiceAccountAuthenticationOptions.Issuers',
    readModule: 'k8s.io/kubernetes',
    readFile: 'pkg/controlplane/apiserver/config.go',
  },
  {
    component: 'kube-apiserver',
    flag: 'authorization-mode',
    regModule: 'k8s.io/kubernetes',
    regFile: 'pkg/kubeapiserver/options/authorization.go',
    field: 'options.BuiltInAuthorizationOptions.Modes',
    readModule: 'k8s.io/kubernetes',
    readFile: 'pkg/kubeapiserver/options/authorization.go',
  },
  {
    component: 'kube-controller-manager',
    flag: 'cluster-signing-cert-file',
    regModule: 'k8s.io/kubernetes',
    regFile: 'cmd/kube-controller-manager/app/options/csrsigningcontroller.go',
    field: 'config.CSRSigningControllerConfiguration.ClusterSigningCertFile',
    readModule: 'k8s.io/kubernetes',
    readFile: 'cmd/kube-controller-manager/app/certificates.go',
  },
  {
    component: 'kube-controller-manager',
    flag: 'leader-elect',
    regModule: 'k8s.io/component-base',
    regFile: 'config/options/leaderelectionconfig.go',
    field: 'config.LeaderElectionConfiguration.LeaderElect',
    readModule: 'k8s.io/kubernetes',
    readFile: 'cmd/kube-controller-manager/app/controllermanager.go',
  },
  {
    component: 'kube-scheduler',
    flag: 'leader-elect',
    regModule: 'k8s.io/component-base',
    regFile: 'config/options/leaderelectionconfig.go',
    field: 'config.LeaderElectionConfiguration.LeaderElect',
    readModule: 'k8s.io/kubernetes',
    readFile: 'cmd/kube-scheduler/app/server.go',
  },
  {
    component: 'etcd',
    flag: 'peer-client-cert-auth',
    regModule: 'go.etcd.io/etcd/server/v3',
    regFile: 'embed/config.go',
    field: 'transport.TLSInfo.ClientCertAuth',
    readModule: 'go.etcd.io/etcd/server/v3',
    readFile: 'embed/etcd.go',
  },
];

describe('flag map (committed data, v1.36.3)', () => {
  it('has all four components with their pinned versions', () => {
    for (const c of flagComponents) {
      const m = loadFlagMap(c);
      expect(m.component).toBe(c);
      expect(m.kubernetesVersion).toBe('v1.36.3');
      expect(m.componentVersion).toBe(c === 'etcd' ? 'v3.6.8' : 'v1.36.3');
      expect(m.flags.length).toBeGreaterThan(50);
      expect(m.coverage.flags).toBe(m.flags.length);
    }
  });

  for (const t of cases) {
    it(`${t.component} --${t.flag}: registration and a meaningful read`, () => {
      const f = flag(t.component, t.flag);
      expect(f.registeredAt?.module).toBe(t.regModule);
      expect(f.registeredAt?.file).toBe(t.regFile);
      // The literal, or a named constant whose declaration holds it (authorizationModeFlag).
      const nc = f.registeredAt?.nameConst;
      if (nc) {
        expect(f.registeredAt?.excerpt).toContain(nc.ident);
        expect(nc.excerpt).toContain(`"${t.flag}"`);
      } else {
        expect(f.registeredAt?.excerpt).toContain(`"${t.flag}"`);
      }
      expect(f.field).toBe(t.field);
      expect(f.readBy).toBe('read');
      const reads = meaningful(f);
      expect(reads.some((r) => r.module === t.readModule && r.file === t.readFile)).toBe(true);
    });
  }

  it('keeps reads inside the component: kube-controller-manager --leader-elect is not read by kube-scheduler code', () => {
    const f = flag('kube-controller-manager', 'leader-elect');
    expect(f.consumedAt.some((r) => r.file.startsWith('cmd/kube-scheduler/'))).toBe(false);
  });

  it('distinguishes peer from client TLS fields that share a type', () => {
    // (Since msgonly.go the log-only `if cfg.PeerTLSInfo.ClientCertAuth { logger.Warn(…) }` is no
    // site: the peer flag's sites name the PeerTLSInfo struct, the client flag's ClientTLSInfo.)
    const peer = flag('etcd', 'peer-client-cert-auth');
    expect(peer.consumedAt.some((r) => r.excerpt.includes('ClientTLSInfo'))).toBe(false);
    expect(peer.consumedAt.some((r) => r.excerpt.includes('PeerTLSInfo'))).toBe(true);
    const client = flag('etcd', 'client-cert-auth');
    expect(client.consumedAt.some((r) => r.excerpt.includes('PeerTLSInfo'))).toBe(false);
    expect(client.consumedAt.some((r) => r.excerpt.includes('ClientTLSInfo'))).toBe(true);
  });

  it('resolves names built by helpers (audit flags) and named constants', () => {
    const f = flag('kube-apiserver', 'audit-log-maxage');
    expect(f.registeredAt?.file).toBe('pkg/server/options/audit.go');
    const b = flag('kube-apiserver', 'audit-webhook-batch-max-size');
    expect(b.registeredAt?.nameFormat).toBe('audit-%s-batch-max-size');
    expect(b.registeredAt?.nameArg).toBe('webhook');
    expect(b.path).toContain('WebhookOptions');
  });

  it('bestCitation names the etcd3 client factory for --etcd-servers', () => {
    const c = bestCitation('kube-apiserver', '--etcd-servers');
    expect(c?.kind).toBe('read');
    expect(c?.text).toMatch(
      /^read at k8s\.io\/apiserver@v0\.36\.3\/pkg\/storage\/storagebackend\/factory\/etcd3\.go:\d+$/,
    );
    expect(c?.url).toMatch(
      /^https:\/\/github\.com\/kubernetes\/kubernetes\/blob\/v1\.36\.3\/staging\/src\/k8s\.io\/apiserver\/pkg\/storage\/storagebackend\/factory\/etcd3\.go#L\d+$/,
    );
    // The line that hands the list to the etcd client library, not the health prober's copy.
    expect(c?.site.excerpt).toMatch(/Endpoints:\s+c\.ServerList/);
    expect(bestCitation('kube-apiserver', 'no-such-flag')).toBeUndefined();
  });

  it('follows copies of the value to the code that acts on it, and cites that first', () => {
    // ServerRunOptions -> server.Config -> GenericAPIServer: the 429 Retry-After switch itself.
    const f = flag('kube-apiserver', 'shutdown-send-retry-after');
    const first = f.consumedAt[0]!;
    expect(first.file).toBe('pkg/server/genericapiserver.go');
    expect(first.hop).toBe(2);
    expect(first.copyTo).toBeUndefined();
    const copy = f.consumedAt.find(
      (r) =>
        r.file === 'pkg/server/config.go' &&
        r.copyTo === 'server.GenericAPIServer.ShutdownSendRetryAfter',
    );
    expect(copy).toBeDefined();
    expect(f.consumedAt.indexOf(copy!)).toBeGreaterThan(0);
    // etcd: embed.Config -> config.ServerConfig -> the token provider that uses it.
    const tok = flag('etcd', 'auth-token').consumedAt[0]!;
    expect(tok.excerpt).toContain('NewTokenProvider');
  });

  it('never attributes a bare .Duration of some other metav1.Duration to a flag', () => {
    for (const c of flagComponents) {
      for (const f of loadFlagMap(c).flags) {
        const bogus = f.consumedAt.filter(
          (r) => r.selector === '.Duration' && r.match < 2 && !r.via,
        );
        expect(bogus.map((r) => `${c} --${f.name} ${r.file}:${r.line}`)).toEqual([]);
      }
    }
    const hpa = flag('kube-controller-manager', 'min-resync-period');
    expect(hpa.consumedAt.some((r) => r.file.includes('podautoscaler'))).toBe(false);
  });

  it('leaves out reads in code the component never runs (cloud-provider ApplyTo for kcm --kubeconfig)', () => {
    const f = flag('kube-controller-manager', 'kubeconfig');
    expect(f.consumedAt[0]!.file).toBe('cmd/kube-controller-manager/app/options/options.go');
    expect(f.consumedAt.some((r) => r.module === 'k8s.io/cloud-provider')).toBe(false);
  });

  it('resolves interface calls to the types the command makes: no PathOptions or DefaultExternalAddress (linked away, issue 25)', () => {
    for (const c of ['kube-scheduler', 'kube-controller-manager'] as const) {
      for (const name of ['authentication-kubeconfig', 'authorization-kubeconfig']) {
        expect(
          flag(c, name).consumedAt.map((r) => r.function),
          `${c} --${name}`,
        ).not.toContain('(*PathOptions).IsExplicitFile');
      }
      expect(
        flag(c, 'bind-address').consumedAt.map((r) => r.function),
        c,
      ).not.toContain('(*SecureServingOptions).DefaultExternalAddress');
    }
  });

  it('follows flag names through a table that is looped over (etcd experimental-* -> feature gates)', () => {
    const f = flag('etcd', 'experimental-initial-corrupt-check');
    expect(f.readBy).toBe('read');
    const r = f.consumedAt.find((x) => x.via?.includes('ExperimentalFlagToFeatureMap'))!;
    expect(r.file).toBe('embed/config.go');
    expect(r.excerpt).toMatch(/range features\.ExperimentalFlagToFeatureMap/);
    expect(r.via).toMatch(
      /key "experimental-initial-corrupt-check" is at features\/etcd_features\.go:\d+/,
    );
    expect(loadFlagMap('etcd').coverage.neverRead).toBe(0);
  });

  it('cites no read that only feeds a log line (msgonly.go), and cites first a read that acts on the value', () => {
    const f = flag('etcd', 'auto-compaction-mode');
    expect(f.consumedAt[0]!.kind).not.toBe('log');
    // embed/etcd.go's `zap.String("auto-compaction-mode", sc.AutoCompactionMode)` in the startup log.
    expect(f.consumedAt.some((r) => /zap\./.test(r.excerpt))).toBe(false);
    expect(f.consumedAt.some((r) => r.excerpt.includes('v3compactor.New'))).toBe(true);
  });

  it('explain prints registration, field and reads', () => {
    const ex = explain('kube-apiserver', '--etcd-servers');
    const text = ex.lines.join('\n');
    expect(text).toContain('registered at k8s.io/apiserver@v0.36.3/pkg/server/options/etcd.go:');
    expect(text).toContain('bound to storagebackend.TransportConfig.ServerList');
    expect(text).toMatch(/read at \d+ sites/);
  });

  it('the CLI prints the trace and the JSON contract', () => {
    const node = process.execPath;
    const out = execFileSync(
      node,
      [join(repoRoot, 'cli/hardwire.ts'), 'flags', 'explain', 'kube-apiserver', '--etcd-servers'],
      { encoding: 'utf8' },
    );
    expect(out).toContain('registered at');
    const json = JSON.parse(
      execFileSync(
        node,
        [
          join(repoRoot, 'cli/hardwire.ts'),
          'flags',
          'kube-apiserver',
          '--flag',
          'etcd-servers',
          '--json',
        ],
        { encoding: 'utf8' },
      ),
    );
    expect(json.component).toBe('kube-apiserver');
    expect(json.kubernetesVersion).toBe('v1.36.3');
    const f = json.flags[0];
    for (const k of [
      'name',
      'type',
      'default',
      'help',
      'deprecated',
      'field',
      'registeredAt',
      'consumedAt',
    ])
      expect(f).toHaveProperty(k);
    expect(f.type).toBe('stringSlice');
    expect(f.default).toBe('[]');
  });

  it("the CLI shows the kubelet's and kube-proxy's config fields, in text and JSON", () => {
    const node = process.execPath;
    for (const c of ['kubelet', 'kube-proxy']) {
      const cfg = loadFlagMap(c).config!;
      const text = execFileSync(node, [join(repoRoot, 'cli/hardwire.ts'), 'flags', c], {
        encoding: 'utf8',
      });
      expect(text).toContain(`config file fields (${cfg.type}`);
      expect(text).toContain(`${cfg.coverage.fields} config fields: ${cfg.coverage.withRead} read`);
      for (const f of cfg.fields.filter((x) => x.consumedAt[0])) {
        const r = f.consumedAt[0]!;
        expect(text).toMatch(
          new RegExp(
            `^${f.key.replace(/\./g, '\\.')}\\s+${f.readBy}\\s+${`${r.module}@${r.version}/${r.file}:${r.line}`.replace(/[.]/g, '\\.')}$`,
            'm',
          ),
        );
      }
      const json = JSON.parse(
        execFileSync(node, [join(repoRoot, 'cli/hardwire.ts'), 'flags', c, '--json'], {
          encoding: 'utf8',
          maxBuffer: 64 << 20,
        }),
      );
      expect(json.config.fields).toHaveLength(cfg.fields.length);
    }
    // One the kubelet reads in the code it runs: its address, at the kubelet server.
    const address = loadFlagMap('kubelet').config!.fields.find((f) => f.key === 'address')!;
    expect(address.flag).toBe('address');
    expect(address.consumedAt[0]).toMatchObject({
      module: 'k8s.io/kubernetes',
      file: 'pkg/kubelet/server/server.go',
      selector: '.Address',
    });
    // kube-proxy's clusterCIDR has no internal field of its name: the conversion puts it in DetectLocal.ClusterCIDRs.
    const cidr = loadFlagMap('kube-proxy').config!.fields.find((f) => f.key === 'clusterCIDR')!;
    expect(cidr.path).toBe('config.KubeProxyConfiguration.DetectLocal.ClusterCIDRs');
    expect(cidr.convertedAt).toMatchObject({
      file: 'pkg/proxy/apis/config/v1alpha1/conversion.go',
    });
  });
});

describe('flag map (committed data, v1.37.2: the upgrade target)', () => {
  it("has every flag target at v1.37.2 (the kubelet and kube-proxy with their config fields), etcd at kubeadm v1.37's 3.7.0", () => {
    expect(mappedComponents('v1.37.2')).toEqual([...flagComponents]);
    for (const c of ['kubelet', 'kube-proxy']) {
      const cfg = loadFlagMap(c, 'v1.37.2').config!;
      expect(cfg.fields.length, c).toBeGreaterThan(60);
      expect(
        cfg.fields.every(
          (f) =>
            f.registeredAt.version === 'v0.37.2' || f.registeredAt.module === 'k8s.io/kubernetes',
        ),
        c,
      ).toBe(true);
    }
    for (const c of mappedComponents('v1.37.2')) {
      const m = loadFlagMap(c, 'v1.37.2');
      expect(m.kubernetesVersion).toBe('v1.37.2');
      expect(m.componentVersion).toBe(c === 'etcd' ? 'v3.7.0' : 'v1.37.2');
      expect(m.flags.length).toBeGreaterThan(50);
      expect(
        m.flags
          .filter((f) => f.registeredAt)
          .every(
            (f) =>
              f.registeredAt!.version ===
              (c === 'etcd' || !f.registeredAt!.module.startsWith('k8s.io/')
                ? f.registeredAt!.version
                : f.registeredAt!.module === 'k8s.io/kubernetes'
                  ? 'v1.37.2'
                  : 'v0.37.2'),
          ),
      ).toBe(true);
    }
  });
});

// Every committed version (v1.36.3, and v1.37.2 for the upgrade plan) is held to the same checks.
describe.each(flagVersions())(
  'flags verify %s (every citation against the module source)',
  (version) => {
    it('verifies all citations with 0 failures, and each cited line, re-opened here, is the one the map quotes', () => {
      // The tool's verifier also fetches any module missing from the cache; its verdict alone proves nothing.
      const res = verifyFlagMaps({ version });
      expect(res.failures).toEqual([]);
      // Re-open every cited file:line in the module cache independently of flags/verify.ts, straight from the JSON.
      const { citations, configCitations } = recheckCitations(
        mappedComponents(version).map((c) => join(dataDir(version), `${c}.json`)),
      );
      if (version === 'v1.36.3') expect(configCitations).toBeGreaterThan(500);
      expect(res.configCitations).toBe(configCitations);
      expect(citations).toBeGreaterThan(1000);
      expect(res.citations).toBe(citations);
      expect(res.verified).toBe(citations);
    }, 600_000);

    // Issue 25: a read that runs only with another flag set (the analyzer's cond.go) is cited after
    // every read that runs without it, so a flag's first citation is on the path every run takes.
    it("cites each flag's conditional reads after its unconditional ones; a condition names other flags of the component", () => {
      let conditional = 0;
      for (const component of mappedComponents(version)) {
        const map = JSON.parse(
          readFileSync(join(dataDir(version), `${component}.json`), 'utf8'),
        ) as { flags: FlagEntry[] };
        const names = new Set(map.flags.map((f) => f.name));
        for (const f of map.flags) {
          const order = f.consumedAt.map((c) => (c.condition ? 1 : 0));
          expect(
            order,
            `${component} --${f.name}: ${f.consumedAt.map((c) => `${c.file}:${c.line}`).join(' ')}`,
          ).toEqual([...order].sort());
          for (const c of f.consumedAt.filter((x) => x.condition)) {
            conditional++;
            expect(c.condition!.flags.length).toBeGreaterThan(0);
            for (const other of c.condition!.flags) {
              expect(other, `${component} --${f.name} ${c.file}:${c.line}`).not.toBe(f.name);
              expect(names.has(other), `${component} --${f.name} conditional on --${other}`).toBe(
                true,
              );
            }
          }
        }
      }
      expect(conditional).toBeGreaterThan(0);
    });
  },
);

// etcd's maps at an etcd no release pairs with (data/etcd/<v>.json, v3.6.16): the same checks, and the CLI's verdict.
const ETCD_ONLY = readdirSync(etcdDataDir())
  .filter((f) => /^v[\d.]+\.json$/.test(f))
  .map((f) => f.slice(0, -'.json'.length));
describe.each(ETCD_ONLY)(
  "flags verify --etcd %s (every citation against etcd's module source)",
  (version) => {
    it('verifies all citations with 0 failures, each cited line re-opened here; the CLI says the same', () => {
      const res = verifyFlagMaps({ maps: [loadEtcdMap(version).map] });
      expect(res.failures).toEqual([]);
      const { citations } = recheckCitations([etcdMapFile(version)]);
      expect(citations).toBeGreaterThan(200);
      expect([res.citations, res.verified, res.configCitations]).toEqual([citations, citations, 0]);
      const cli = spawnSync(
        process.execPath,
        [join(repoRoot, 'cli/hardwire.ts'), 'flags', 'verify', '--etcd', version],
        { encoding: 'utf8' },
      );
      expect(cli.status, cli.stderr).toBe(0);
      expect(cli.stdout).toBe(
        `${citations} citations, ${citations} verified, 0 failed (0 of them of config fields)\n`,
      );
    }, 600_000);
  },
);

// Go is required here as everywhere in hardwire (the binaries are built with it): no skip.
describe('regeneration (needs Go)', () => {
  // Issue 25: flags prove found these cited lines never run (the linker drops TLSInfo.String from
  // kube-apiserver; kube-controller-manager never calls kube-apiserver's AddFlags). Fixed in the
  // analyzer (rta.go: only types converted to an interface receive interface calls; reads.go: a
  // lookup by name counts only in code the process runs), so the regenerated map has them no more.
  it("the analyzer's own tests pass: interface calls reach converted types only, lookups count in run code only, message-only reads are subsumed and no site, conditional reads rank last, each read carries its guards, a protobuf copy is not followed", () => {
    const r = spawnSync(
      goBinary(),
      [
        'test',
        '-count=1',
        '-run',
        '^(TestRTAConvertedOnly|TestLookupOnlyInRunCode|TestSubsumedReads|TestConditionalReads|TestMessageOnlyReads|TestGuards)$',
        '.',
      ],
      { cwd: join(repoRoot, 'harness', 'flags', 'analyzer'), env: goEnv(), encoding: 'utf8' },
    );
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
  }, 600_000);

  it('cites none of the lines flags prove found the linker drops or the process never calls', () => {
    const cites = (component: string, name: string) =>
      flag(component, name).consumedAt.map((c) => `${c.module}@${c.version}/${c.file}:${c.line}`);
    expect(cites('kube-apiserver', 'etcd-cafile')).not.toContain(
      'go.etcd.io/etcd/client/pkg/v3@v3.6.8/transport/listener.go:213',
    );
    expect(cites('kube-apiserver', 'etcd-cafile').length).toBeGreaterThan(0);
    for (const [name, line] of [
      ['authorization-webhook-cache-authorized-ttl', 202],
      ['authorization-webhook-cache-unauthorized-ttl', 203],
    ] as const) {
      expect(cites('kube-controller-manager', name)).not.toContain(
        `k8s.io/kubernetes@v1.36.3/pkg/kubeapiserver/options/authorization.go:${line}`,
      );
      expect(cites('kube-controller-manager', name).length).toBeGreaterThan(0);
    }
    // etcd's --name copied into a MemberList reply (a protobuf message) and read by the client that
    // receives it (client.go's Sync): not this process's read (reads.go wireField).
    const sync = readFileSync(
      join(goModCache(), 'go.etcd.io/etcd/client/v3@v3.6.8/client.go'),
      'utf8',
    )
      .split('\n')[193]!
      .trim();
    expect(sync).toBe('if len(m.Name) != 0 && !m.IsLearner {');
    expect(cites('etcd', 'name')).not.toContain('go.etcd.io/etcd/client/v3@v3.6.8/client.go:194');
    expect(cites('etcd', 'name').length).toBeGreaterThan(0);
  });

  // Issue 25: flags prove never hit these, and no valid value reaches them: each only formats the
  // error of a check whose condition, cited instead, reads the same field; or lies past the return
  // MaybeDefaultWithSelfSignedCerts takes whenever --tls-cert-file or --tls-private-key-file is set
  // (analyzer subsumed.go). Read here from the module cache, not from the analyzer.
  it("cites a check's condition, not the message that formats the same field, nor a line past the return a set value takes", () => {
    const cites = (name: string) =>
      flag('kube-apiserver', name).consumedAt.map((c) => `${c.file}:${c.line}`);
    const src = (file: string) =>
      readFileSync(join(goModCache(), 'k8s.io', 'apiserver@v0.36.3', file), 'utf8').split('\n');
    const audit = src('pkg/server/options/audit.go');
    for (const [name, cond, msg] of [
      ['audit-log-maxage', 482, 483],
      ['audit-log-maxbackup', 485, 486],
      ['audit-log-maxsize', 488, 489],
    ] as const) {
      const field = /if o\.(\w+) < 0 \{/.exec(audit[cond - 1]!)![1]!;
      expect(audit[msg - 1]).toContain(`can't be a negative number", o.${field})`);
      expect(cites(name)).toContain(`pkg/server/options/audit.go:${cond}`);
      expect(cites(name)).not.toContain(`pkg/server/options/audit.go:${msg}`);
    }
    const serving = src('pkg/server/options/serving.go');
    expect(serving[369]!.trim()).toBe(
      'if len(keyCert.CertFile) != 0 || len(keyCert.KeyFile) != 0 {',
    );
    expect(serving[370]!.trim()).toBe('return nil');
    for (const name of ['tls-cert-file', 'tls-private-key-file']) {
      expect(cites(name)).toContain('pkg/server/options/serving.go:370');
      expect(cites(name).filter((c) => /serving\.go:(3[89]\d|40\d)$/.test(c))).toEqual([]);
    }
    expect(cites('secure-port')).toEqual(
      expect.arrayContaining([
        'pkg/server/options/serving.go:145',
        'pkg/server/options/serving.go:147',
      ]),
    );
    expect(cites('secure-port')).not.toEqual(
      expect.arrayContaining(['pkg/server/options/serving.go:146']),
    );
    expect(cites('secure-port')).not.toEqual(
      expect.arrayContaining(['pkg/server/options/serving.go:148']),
    );
  });

  // The analyzer runs when any of its inputs changed since it last ran here (test/helpers/flag-regen.ts).
  it('is byte-identical to the committed data', () => {
    const { dir: out } = cachedRegeneration('kubernetes v1.36.3', (dir) => {
      regenerate({ outDir: dir, log: QUIET });
    });
    const committed = readdirSync(dataDir('v1.36.3')).sort();
    expect(readdirSync(out).sort()).toEqual(committed);
    for (const f of committed) {
      const same = readFileSync(join(out, f)).equals(readFileSync(join(dataDir('v1.36.3'), f)));
      expect(same, `${f} differs from the regenerated copy`).toBe(true);
    }
  }, 1_200_000);

  it.each(ETCD_ONLY)(
    'etcd %s alone (flags --regenerate --etcd) is byte-identical to the committed map and gate table',
    (version) => {
      const { dir: out } = cachedRegeneration(`etcd ${version}`, (dir) => {
        regenerateEtcd({ version, outDir: dir, log: QUIET });
      });
      expect(readdirSync(out).sort()).toEqual([`${version}.feature-gates.json`, `${version}.json`]);
      for (const [mine, committed] of [
        [join(out, `${version}.json`), etcdMapFile(version)],
        [join(out, `${version}.feature-gates.json`), etcdGateFile(version)],
      ] as const) {
        expect(
          readFileSync(mine).equals(readFileSync(committed)),
          `${committed} differs from the regenerated copy`,
        ).toBe(true);
      }
    },
    1_200_000,
  );

  it('keys the kept regeneration by every analyzer file, the TypeScript that drives it and the Go version', () => {
    const inputs = regenInputFiles();
    const analyzer = execFileSync('git', ['ls-files', 'harness/flags/analyzer'], {
      cwd: repoRoot,
      encoding: 'utf8',
    })
      .trim()
      .split('\n');
    expect(analyzer.length).toBeGreaterThan(20);
    expect(analyzer.filter((f) => !inputs.includes(f))).toEqual([]);
    for (const f of [
      'harness/flags/regenerate.ts',
      'harness/flags/etcd-regenerate.ts',
      'harness/flags/gates-regenerate.ts',
      'harness/flags/api-lifecycle.ts',
      'harness/flags/go.ts',
      'core/components/registry/index.ts',
    ]) {
      expect(inputs, f).toContain(f);
    }
    expect(regenKey('kubernetes v1.36.3')).not.toBe(regenKey('etcd v3.6.8'));
  });
});
