// `hardwire lab ssh HOST -- cmd`: the command reaches the host's shell as ssh passes it (joined with spaces).
import { describe, expect, it } from 'vitest';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { labSshArgv } from '../cli/commands/lab.ts';
import { run } from '../lib/proc.ts';
import { tempDir } from './helpers/tmp.ts';

const info = { identityFile: '/lab/id_ed25519', knownHosts: '/lab/known_hosts' };

/** What OpenSSH does with the words after `--`: joins them with spaces and has the remote login shell run the string. */
function fakeSsh(dir: string): string {
  const bin = join(dir, 'ssh');
  writeFileSync(bin, '#!/bin/sh\nwhile [ "$1" != "--" ]; do shift; done; shift\nexec sh -c "$*"\n');
  chmodSync(bin, 0o755);
  return bin;
}

describe('lab ssh argv', () => {
  it('a quoted command string runs through the shell, pipes and all', async () => {
    const argv = labSshArgv(info, { address: '10.213.7.11' }, ['echo a b c | wc -w']);
    expect(argv.slice(-3)).toEqual(['10.213.7.11', '--', 'echo a b c | wc -w']);
    const ssh = fakeSsh(tempDir('hardwire-lab-ssh-'));
    expect((await run(ssh, argv, { step: 'lab ssh' })).stdout.trim()).toBe('3');
  });

  it('separate words are joined as ssh joins them', async () => {
    const argv = labSshArgv(info, { address: '10.213.7.11' }, ['echo', 'one', 'two']);
    expect(
      (await run(fakeSsh(tempDir('hardwire-lab-ssh-')), argv, { step: 'lab ssh' })).stdout,
    ).toBe('one two\n');
  });

  it('no command opens a login shell; an inner host goes through its pinned jump', () => {
    const argv = labSshArgv(info, { address: '10.213.255.12', jump: '10.213.7.11' }, []);
    expect(argv.at(-1)).toBe('10.213.255.12');
    expect(argv).not.toContain('--');
    const proxy = argv.find((a) => a.startsWith('ProxyCommand='));
    expect(proxy).toContain('StrictHostKeyChecking=yes');
    expect(proxy).toContain('-W %h:%p 10.213.7.11');
  });
});
