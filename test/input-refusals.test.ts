// Hostile input gets one line and exit 2 before anything is written (issue 41): a YAML bomb in an
// inventory, a rollback run id that is not one, a knownHosts path that is not a known_hosts file,
// an ssh.address that is not an address.
import { describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { hardwire } from './helpers/cli.ts';
import { tempDir } from './helpers/tmp.ts';

function inventory(extra: Record<string, unknown> = {}): string {
  return stringify({
    apiVersion: 'hardwire/v1',
    kind: 'Inventory',
    cluster: { name: 'demo' },
    hosts: [{ name: 'cp-0', address: '198.51.100.10' }],
    ...extra,
  });
}

/** The one stderr line of a refused run, after checking the exit code and that stdout is empty. */
function refusal(args: string[]): string {
  const r = hardwire(args);
  expect(r.code, r.stderr).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr.endsWith('\n') && !r.stderr.trimEnd().includes('\n'), r.stderr).toBe(true);
  return r.stderr.trimEnd();
}

describe('input refusals', () => {
  it('a YAML bomb: one line naming the file, exit 2, nothing written', () => {
    const dir = tempDir();
    const levels = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const bomb = levels
      .map((l, i) =>
        i === 0
          ? `${l}: &${l} [${Array(9).fill('"x"').join(',')}]`
          : `${l}: &${l} [${Array(9)
              .fill(`*${levels[i - 1]}`)
              .join(',')}]`,
      )
      .join('\n');
    const file = join(dir, 'bomb.yaml');
    writeFileSync(file, `${inventory().trimEnd()}\n${bomb}\n`);
    expect(refusal(['render', '--inventory', file, '--state-dir', join(dir, 'state')])).toBe(
      `error: ${file}: YAML: Excessive alias count indicates a resource exhaustion attack; write the values out instead of through nested aliases`,
    );
    expect(readdirSync(dir)).toEqual(['bomb.yaml']);
  });

  it('rollback refuses a run id that is not exactly one, before it reads the inventory', () => {
    const dir = tempDir();
    // The inventory is not even read: its hosts are never reached.
    const inv = join(dir, 'absent.yaml');
    for (const id of ['../..', 'Z-0000', '20261130T052500Z-1a2b/../..', '20261130T052500Z-1A2B'])
      expect(refusal(['rollback', id, '--inventory', inv, '--state-dir', join(dir, 'state')])).toBe(
        `error: run-id: ${JSON.stringify(id)} is not a run id such as 20261130T052500Z-1a2b (see "hardwire rollback --list")`,
      );
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a knownHosts path --accept-new-host-keys may not append to: one line, exit 2, nothing appended', () => {
    const dir = tempDir();
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'export PATH=/usr/bin\n');
    const link = join(dir, 'link');
    symlinkSync(victim, link);
    const outside = join(tempDir(), 'known_hosts');
    const state = join(dir, 'state');
    mkdirSync(state);
    const cases: [string, string][] = [
      [link, `${link} is a symlink; name the known_hosts file itself`],
      [
        victim,
        `${victim}:1 is not a known_hosts line; hardwire appends host keys only to a known_hosts file`,
      ],
      [
        outside,
        `${outside} does not exist, and hardwire creates a known_hosts file only under the state dir, the inventory's directory or ~/.ssh; move it there`,
      ],
    ];
    cases.forEach(([knownHosts, message], i) => {
      const file = join(dir, `inv-${i}.yaml`);
      writeFileSync(file, inventory({ knownHosts }));
      const args = ['wire', '--dry-run', '--accept-new-host-keys', '--inventory', file];
      expect(refusal([...args, '--state-dir', state])).toBe(`error: knownHosts: ${message}`);
    });
    expect(readFileSync(victim, 'utf8')).toBe('export PATH=/usr/bin\n');
    expect(readdirSync(state)).toEqual([]);
  });

  it('an ssh.address that is neither IPv4 nor a DNS name (here an ssh option): one line, exit 2, nothing written', () => {
    const dir = tempDir();
    const file = join(dir, 'inventory.yaml');
    const address = '-oProxyCommand=touch pwned';
    writeFileSync(
      file,
      inventory({ hosts: [{ name: 'cp-0', address: '198.51.100.10', ssh: { address } }] }),
    );
    const state = join(dir, 'state');
    expect(refusal(['wire', '--dry-run', '--inventory', file, '--state-dir', state])).toBe(
      `error: hosts[0].ssh.address: ${JSON.stringify(address)} is not a DNS name: lowercase letters, digits, "-" and "." only, each label starting and ending with a letter or digit; use an IPv4 address or a DNS name such as node1.example.com`,
    );
    expect(readdirSync(dir)).toEqual(['inventory.yaml']);
  });
});
