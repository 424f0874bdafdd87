// The lab registry (issue 44) as render sees it, without hosts: which host runs it, its unit, its
// certificate in the table, containerd's mirror config, and the names `images add` accepts.
import { describe, expect, it } from 'vitest';
import { parseInventory } from '../core/inventory/load.ts';
import { componentsOn, binariesFor } from '../core/components/registry/index.ts';
import { allLeaves } from '../core/pki/table.ts';
import { registryModel, REGISTRY_CERT } from '../core/components/models/registry.ts';
import { containerdModel, DOCKER_IO_HOSTS } from '../core/components/models/containerd.ts';
import { renderUnit } from '../core/render/systemd.ts';
import type { UnitModel } from '../core/components/models/index.ts';

const inventory = (hosts: string) =>
  parseInventory(`apiVersion: hardwire/v1
kind: Inventory
cluster: {name: c}
hosts:
${hosts}`);

const WITH_WORKERS = `  - {name: cp-0, address: 198.51.100.10, roles: [etcd, control-plane]}
  - {name: cp-1, address: 198.51.100.11, roles: [etcd, control-plane]}
  - {name: w-1, address: 198.51.100.21, roles: [worker]}
`;

describe('the lab registry, rendered', () => {
  it('runs on the first control-plane host of a cluster with workers, and nowhere without workers', () => {
    const inv = inventory(WITH_WORKERS);
    expect(inv.hosts.map((h) => [h.name, componentsOn(h).includes('registry')])).toEqual([
      ['cp-0', true],
      ['cp-1', false],
      ['w-1', false],
    ]);
    expect(
      binariesFor(inv.hosts[0]!).filter((b) => ['registry', 'imagebuild'].includes(b.name)),
    ).toEqual([
      { name: 'registry', readBy: ['registry'] },
      { name: 'imagebuild', readBy: [] },
    ]);
    const cpOnly = inventory(
      `  - {name: cp-0, address: 198.51.100.10, roles: [etcd, control-plane]}\n`,
    );
    expect(cpOnly.hosts.some((h) => h.isRegistry)).toBe(false);
  });

  it('its serving cert is in the one certificate table: the cluster CA, server usage, the host name and address and loopback, placed on its host for the registry', () => {
    const leaf = allLeaves(inventory(WITH_WORKERS)).filter((l) => l.id === 'registry-server');
    expect(leaf).toHaveLength(1);
    expect(leaf[0]).toMatchObject({
      host: 'cp-0',
      ca: 'ca',
      usage: 'server',
      dns: ['cp-0', 'localhost'],
      ips: ['198.51.100.10', '127.0.0.1'],
      placements: [{ on: 'registry', path: REGISTRY_CERT, readBy: ['registry'], key: true }],
    });
  });

  it('its unit ends ExecStart at the config path (no continuation into Restart=) and pushes each image after start', () => {
    const inv = inventory(WITH_WORKERS);
    const unit = renderUnit(registryModel({ inv, host: inv.hosts[0]! }) as UnitModel, {
      cluster: 'c',
      host: 'cp-0',
      after: [],
    });
    expect(unit).toMatch(/\n {2}\/etc\/distribution\/config\.yml\nRestart=on-failure\n/);
    expect(unit).toMatch(/^User=registry$/m);
    expect(unit).toMatch(/^LoadCredential=registry\.key:\/etc\/kubernetes\/pki\/registry\.key$/m);
    expect(unit.match(/^ExecStartPost=\+\/usr\/local\/bin\/imagebuild -push .*$/gm)).toEqual([
      'ExecStartPost=+/usr/local/bin/imagebuild -push /var/lib/hardwire/registry-images/busybox.tar -registry 127.0.0.1:5000 -ca /etc/kubernetes/pki/ca.crt -as library/busybox:latest -as library/busybox:1.35.0',
      'ExecStartPost=+/usr/local/bin/imagebuild -push /var/lib/hardwire/registry-images/nginx.tar -registry 127.0.0.1:5000 -ca /etc/kubernetes/pki/ca.crt -as library/nginx:latest -as library/nginx:1.22.1',
    ]);
  });

  it("containerd on a worker: config_path, and docker.io's hosts.toml with the registry first and docker.io last; neither without a registry", () => {
    const inv = inventory(WITH_WORKERS);
    const m = containerdModel({ inv, host: inv.hosts[2]! });
    const config = m.files!.find((f) => f.path === '/etc/containerd/config.toml')!.content;
    expect(config).toContain('config_path = "/etc/containerd/certs.d"');
    const hosts = m.files!.find((f) => f.path === DOCKER_IO_HOSTS)!.content;
    const lines = hosts.split('\n').filter((l) => l && !l.startsWith('#') && !/^\s+#/.test(l));
    expect(lines).toEqual([
      'server = "https://registry-1.docker.io"',
      '[host."https://198.51.100.10:5000"]',
      '  capabilities = ["pull", "resolve"]',
      '  ca = "/etc/kubernetes/pki/ca.crt"',
    ]);
  });
});
