// The demo's `hardwire` on PATH, run by bash: with no options (the built-in lab, as the README's
// `hardwire learn ... --demo` runs it) and with the ones a run was given; `lab ssh HOST -- CMD`
// goes to OpenSSH with the inventory's key and pinned host keys, an unknown host is refused.
// ssh and node are stand-ins on PATH that print their argv: no host is reached.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hardwireShim } from '../harness/learn/env.ts';
import type { Inventory } from '../core/inventory/load.ts';
import { run } from '../lib/proc.ts';
import { defaultStateDir } from '../lib/paths.ts';

const dir = mkdtempSync(join(tmpdir(), 'hwtest-shims-'));
const echoArgv = (name: string, env = '') => {
  writeFileSync(join(dir, name), `#!/bin/bash\nprintf '%s\\n' ${env}"${name}" "$@"\n`);
  chmodSync(join(dir, name), 0o755);
};
echoArgv('ssh');
echoArgv('fake-node', '"state=$HARDWIRE_STATE" ');

const host = (name: string, address: string) => ({
  name,
  address,
  roles: ['control-plane'],
  ssh: { user: 'root', port: 22, identityFile: '/nonexistent/id', proxyJump: '' },
});
const inv = {
  hosts: [host('node1', '10.0.0.11'), host('node2', '10.0.0.12')],
  knownHostsFile: '/lab/known_hosts',
} as unknown as Inventory;

async function shim(cliArgs: string[], args: string[]) {
  const file = join(dir, `hardwire-${cliArgs.length}`);
  writeFileSync(
    file,
    hardwireShim(inv, cliArgs, [join(dir, 'fake-node'), '/repo/cli/hardwire.ts']),
  );
  chmodSync(file, 0o755);
  const r = await run(file, args, {
    step: 'shim',
    allowFail: true,
    env: { PATH: `${dir}:/usr/bin:/bin` },
  });
  return { code: r.code, lines: r.stdout.trim().split('\n'), stderr: r.stderr.trim() };
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the demo's hardwire", () => {
  it('runs this CLI with no options added when the run was given none, its state dir absolute', async () => {
    const r = await shim([], ['trace', 'apply', '--capstone']);
    expect(r.code).toBe(0);
    expect(r.lines).toEqual([
      `state=${defaultStateDir()}`,
      'fake-node',
      '/repo/cli/hardwire.ts',
      'trace',
      'apply',
      '--capstone',
    ]);
  });

  it("adds the run's options after the command's", async () => {
    const r = await shim(['--inventory', '/x/inv.yaml'], ['learn', '0.1']);
    expect(r.lines.slice(3)).toEqual(['learn', '0.1', '--inventory', '/x/inv.yaml']);
  });

  it('sends lab ssh HOST -- CMD to that host over OpenSSH, host keys pinned', async () => {
    const r = await shim(
      ['--inventory', '/x/inv.yaml'],
      ['lab', 'ssh', 'node2', '--', 'nft list ruleset'],
    );
    expect(r.code).toBe(0);
    expect(r.lines[0]).toBe('ssh');
    expect(r.lines).toContain('UserKnownHostsFile=/lab/known_hosts');
    expect(r.lines).toContain('StrictHostKeyChecking=yes');
    expect(r.lines).toContain('10.0.0.12');
    expect(r.lines).not.toContain('10.0.0.11');
    expect(r.lines.at(-1)).toBe('nft list ruleset');
    expect(r.lines).not.toContain('--inventory');
  });

  it('refuses a host the inventory does not have, in one line', async () => {
    const r = await shim([], ['lab', 'ssh', 'node9', '--', 'true']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('hardwire lab ssh: no host node9 in the inventory');
  });
});
