import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseInventory } from '../inventory/load.ts';
import { InputError } from '../lib/errors.ts';
import { hardwire } from './helpers/cli.ts';
import { tempDir } from './helpers/tmp.ts';

const base = `apiVersion: hardwire/v1
kind: Inventory
cluster:
  name: demo
hosts:
  - name: cp-0
    address: 198.51.100.10
  - name: cp-1
    address: 198.51.100.11
  - name: cp-2
    address: 198.51.100.12
`;

function errorOf(text: string): InputError {
  try {
    parseInventory(text, 'inv.yaml');
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
  throw new Error('expected an InputError');
}

describe('inventory', () => {
  it('fills the documented defaults', () => {
    const inv = parseInventory(base);
    expect(inv.cluster.kubernetesVersion).toBe('v1.36.3');
    expect(inv.cluster.serviceCIDR).toBe('10.96.0.0/12');
    expect(inv.serviceIp).toBe('10.96.0.1');
    expect(inv.endpoint).toEqual({ host: '198.51.100.10', port: 6443 });
    expect(inv.hosts[1]!.roles).toEqual(['etcd', 'control-plane']);
    expect(inv.hosts[1]!.ssh).toEqual({ user: 'root', port: 22, identityFile: '~/.ssh/id_ed25519', proxyJump: '', become: '' });
    expect(inv.warnings).toEqual([]);
  });

  const cases: [string, string, RegExp][] = [
    ['unknown key', base.replace('  name: demo', '  name: demo\n  podCidr: 10.0.0.0/8'), /^cluster\.podCidr: unknown key; valid keys here are name, kubernetesVersion, serviceCIDR, podCIDR/],
    ['unknown host key', base.replace('    address: 198.51.100.11', '    adress: 198.51.100.11'), /^hosts\[1\]\.adress: unknown key/],
    ['bad CIDR', base.replace('  name: demo', '  name: demo\n  serviceCIDR: 10.96.0.0/33'), /^cluster\.serviceCIDR: "10\.96\.0\.0\/33" is not an IPv4 network CIDR/],
    ['CIDR with host bits', base.replace('  name: demo', '  name: demo\n  podCIDR: 10.244.1.0/16'), /^cluster\.podCIDR: /],
    ['duplicate name', base.replace('name: cp-1', 'name: cp-0'), /^hosts\[1\]\.name: "cp-0" duplicates hosts\[0\]\.name/],
    ['duplicate address', base.replace('198.51.100.11', '198.51.100.10'), /^hosts\[1\]\.address: 198\.51\.100\.10 duplicates hosts\[0\]\.address/],
    ['bad address', base.replace('198.51.100.11', '198.51.100.300'), /^hosts\[1\]\.address: must be an IPv4 address/],
    ['zero control-plane', base.replaceAll('    address: 198.51.100.1', '    roles: [etcd]\n    address: 198.51.100.1'), /^hosts\[\]\.roles: no host has the control-plane role/],
    ['overlapping CIDRs', base.replace('  name: demo', '  name: demo\n  podCIDR: 10.96.0.0/16'), /^cluster\.podCIDR: 10\.96\.0\.0\/16 overlaps cluster\.serviceCIDR 10\.96\.0\.0\/12/],
    ['wrong type', base.replace('  name: demo', '  name: demo\n  extraSANs: foo'), /^cluster\.extraSANs: expected array, got string/],
    ['missing cluster name', base.replace('  name: demo\n', '  dnsDomain: cluster.local\n'), /^cluster\.name: expected string \(it is missing\)/],
    ['bad apiVersion', base.replace('hardwire/v1', 'hardwire/v2'), /^apiVersion: must be "hardwire\/v1"/],
    ['YAML syntax', base.replace('kind: Inventory', 'kind: [Inventory'), /^inv\.yaml(:\d+)?: YAML syntax/],
    ['empty file', '', /inventory is empty/],
    ['bad port', base.replace('    address: 198.51.100.10', '    address: 198.51.100.10\n    ssh: {port: 70000}'), /^hosts\[0\]\.ssh\.port: /],
  ];
  for (const [name, text, re] of cases) {
    it(`rejects ${name} with one line naming the field`, () => {
      const e = errorOf(text);
      expect(e.message).toMatch(re);
      expect(e.message).not.toContain('\n');
      expect(e.exitCode).toBe(2);
    });
  }

  it('warns, but accepts, an even number of etcd members', () => {
    const inv = parseInventory(base.replace('  - name: cp-2\n    address: 198.51.100.12\n', ''));
    expect(inv.etcdHosts).toHaveLength(2);
    expect(inv.warnings.join()).toMatch(/2 etcd members .* odd number for quorum/);
  });

  it('the CLI exits 2 with one stderr line and writes nothing', () => {
    const dir = tempDir();
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, base.replace('198.51.100.11', '198.51.100.10'));
    const r = hardwire(['pki', '--inventory', file, '--state-dir', join(dir, 'state')]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^error: hosts\[1\]\.address: /);
    expect(r.stdout).toBe('');
    const missing = hardwire(['pki', '--inventory', join(dir, 'nope.yaml')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: --inventory: cannot read .*nope\.yaml \(ENOENT\)/);
  });
});
