// The lab registry (issue 44) is not Kubernetes: its model and containerd's registry config cite
// the source lines themselves. Each citation in the rendered files is collected here and re-opened
// in the Go module cache, and the cited line must hold what the citation says is read there. Not in
// `pnpm test:unit`: it reads the module cache (fetched here if missing).
import { beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { parseInventory } from '../core/inventory/load.ts';
import {
  REGISTRY_FIELDS,
  REGISTRY_MODULE,
  registryConfig,
  registryModel,
} from '../core/components/models/registry.ts';
import { containerdConfig, dockerIoHosts } from '../core/components/models/containerd.ts';
import { renderUnit } from '../core/render/systemd.ts';
import type { UnitModel } from '../core/components/models/index.ts';
import { moduleDir, reopen } from './helpers/modcache.ts';
import { run } from '../lib/proc.ts';
import { goEnv } from '../core/components/binaries/go-env.ts';

const CONTAINERD = 'github.com/containerd/containerd/v2@v2.3.3';
const roots = {
  D: moduleDir(...(REGISTRY_MODULE.split('@') as [string, string])),
  C: moduleDir(...(CONTAINERD.split('@') as [string, string])),
};

/** What each cited line must hold: the field or call that reads what the citation names. */
const HOLDS: Record<string, RegExp> = {
  'D configuration/configuration.go:798': /Version: MajorMinorVersion\(0, 1\)/,
  'D registry/registry.go:390': /config\.Log\.Level/,
  'D registry/registry.go:393': /config\.Log\.Formatter/,
  'D registry/storage/driver/filesystem/driver.go:83': /parameters\["rootdirectory"\]/,
  'D registry/registry.go:235': /config\.HTTP\.Addr/,
  'D registry/registry.go:285':
    /LoadX509KeyPair\(config\.HTTP\.TLS\.Certificate, config\.HTTP\.TLS\.Key\)/,
  'D registry/registry.go:244': /tlsVersions\[config\.HTTP\.TLS\.MinimumTLS\]/,
  'D registry/registry.go:104': /ServeCmd = &cobra\.Command/,
  'D registry/registry.go:476': /len\(args\) > 0/,
  'D registry/registry.go:477': /configurationPath = args\[0\]/,
  'D registry/handlers/app.go:632': /HTTP\.Secret == ""/,
  'D registry/handlers/app.go:638': /No HTTP secret provided - generated random secret/,
  'C internal/cri/config/config.go:233': /toml:"config_path"/,
  'C internal/cri/server/images/image_pull.go:184': /if c\.config\.UseLocalImagePull/,
  'C internal/cri/server/images/image_pull.go:187': /pullImageWithTransferService/,
  'C internal/cri/config/config.go:564': /Name: +"DisableSnapshotAnnotations"/,
  'C internal/cri/config/config.go:569': /return !c\.DisableSnapshotAnnotations/,
  'C internal/cri/config/config_unix.go:33': /DisableSnapshotAnnotations: true/,
  'C internal/cri/server/images/image_pull.go:316':
    /WithHostDir\(c\.config\.Registry\.ConfigPath\)/,
  'C core/transfer/registry/registry.go:127': /ropts\.hostDir != ""/,
  'C core/transfer/registry/registry.go:128': /HostDirFromRoot\(ropts\.hostDir\)/,
  'C core/remotes/docker/config/hosts.go:316': /"hosts\.toml"/,
  'C core/remotes/docker/config/hosts.go:392': /toml:"host"/,
  'C core/remotes/docker/config/hosts.go:415': /parseHostConfig\(c\.Server/,
  'C core/remotes/docker/config/hosts.go:390': /Server string `toml:"server"`/,
  'C core/remotes/docker/config/hosts.go:102': /host == "docker\.io"/,
  'C core/remotes/docker/config/hosts.go:104': /"registry-1\.docker\.io"/,
  'C core/remotes/docker/config/hosts.go:456': /case "pull":/,
  'C core/remotes/docker/config/hosts.go:459': /HostCapabilityResolve/,
  'C core/remotes/docker/config/hosts.go:472': /config\.CACert != nil/,
  'C core/remotes/docker/config/hosts.go:475': /result\.caCerts = \[\]string/,
};

/**
 * Every "D file:N", "C file:N-M" and following ", :N" in a text, as "X file:N" keys (a range: both ends).
 * A full "read at <module>@<version>/file:N" is keyed under its module's letter.
 */
function citations(text: string): string[] {
  const out: string[] = [];
  const full = text.replace(
    /read at github\.com\/distribution\/distribution\/v3@v3\.0\.0\//g,
    'D ',
  );
  for (const m of full.matchAll(
    /\b([DC]) ([\w./-]+\.go):(\d+)(?:-(\d+))?((?:, :\d+(?:-\d+)?)*)/g,
  )) {
    const [mod, file, a, b, more] = [m[1]!, m[2]!, m[3]!, m[4], m[5] ?? ''];
    out.push(`${mod} ${file}:${a}`);
    if (b) out.push(`${mod} ${file}:${b}`);
    for (const x of more.matchAll(/:(\d+)(?:-(\d+))?/g)) {
      out.push(`${mod} ${file}:${x[1]}`);
      if (x[2]) out.push(`${mod} ${file}:${x[2]}`);
    }
  }
  return [...new Set(out)];
}

function registrySection(config: string): string {
  const start = config.indexOf('[plugins."io.containerd.cri.v1.images".registry]');
  expect(start).toBeGreaterThan(0);
  return config.slice(start, config.indexOf('\n\n', start));
}

const inv = parseInventory(`apiVersion: hardwire/v1
kind: Inventory
cluster: {name: c}
hosts:
  - {name: cp-1, address: 198.51.100.11, roles: [etcd, control-plane, worker]}
`);

beforeAll(async () => {
  for (const m of [REGISTRY_MODULE, CONTAINERD]) {
    const [mod, v] = m.split('@') as [string, string];
    if (!existsSync(moduleDir(mod, v)))
      await run('go', ['mod', 'download', m], {
        step: 'go mod download',
        env: goEnv(),
        timeoutMs: 300_000,
      });
  }
}, 320_000);

describe("the lab registry's citations", () => {
  const unit = renderUnit(registryModel({ inv, host: inv.hosts[0]! }) as UnitModel, {
    cluster: 'c',
    host: 'cp-1',
    after: [],
  });
  const texts = {
    'config.yml': registryConfig(),
    'registry.service': unit,
    // Only its registry section: the rest is containerd's model's own (test/worker-citations.test.ts).
    'containerd config.toml': registrySection(containerdConfig({ registryHosts: true })),
    'hosts.toml': dockerIoHosts(inv.hosts[0]!),
  };

  it('each config field the registry is given cites a line that reads it', () => {
    expect(REGISTRY_FIELDS.length).toBeGreaterThanOrEqual(8);
    for (const f of REGISTRY_FIELDS) {
      expect(texts['config.yml']).toContain(`#   read at ${f.readAt}`);
    }
  });

  it("every citation in the rendered registry unit, its config, and containerd's registry config re-opens to the line that reads it", () => {
    const seen: string[] = [];
    for (const [name, text] of Object.entries(texts)) {
      const cs = citations(text);
      expect(cs.length, name).toBeGreaterThan(0);
      for (const c of cs) {
        seen.push(c);
        const want = HOLDS[c];
        expect(
          want,
          `${name} cites ${c}, which this test does not know: add what the line must hold`,
        ).toBeDefined();
        const [mod, at] = c.split(' ') as ['D' | 'C', string];
        const [file, line] = at.split(':') as [string, string];
        expect(reopen(roots[mod], file, Number(line)), c).toMatch(want!);
      }
    }
    // And nothing in the table goes unused: each entry is cited somewhere.
    expect(Object.keys(HOLDS).filter((k) => !seen.includes(k))).toEqual([]);
  });
});
