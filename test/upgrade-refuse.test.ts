// upgrade plan without --offline refuses a cluster it cannot read: a host SSH cannot reach is one
// line, exit 2, naming the host and the step, and nothing is printed as a plan. upgrade apply runs
// the same live checks first, so it refuses the same host the same way before anything else.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { hardwire } from './helpers/cli.ts';
import { repoRoot } from '../lib/paths.ts';

/** This machine's own address, where nothing listens on port 1: the refusal comes at once. */
const own =
  Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address ?? '192.0.2.1';

describe('upgrade plan and apply, live, unreachable', () => {
  for (const [cmd, extra, tail] of [
    ['plan', [], 'the plan reads a cluster that passes verify'],
    ['apply', ['--dry-run'], 'nothing was changed on any host'],
  ] as const) {
    it(`${cmd}: a host SSH cannot reach: exit 2, one line naming the host and the step`, () => {
      const dir = mkdtempSync(join(tmpdir(), 'hardwire-refuse-'));
      try {
        const key = join(dir, 'id');
        expect(spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]).status).toBe(
          0,
        );
        const doc = parse(readFileSync(join(repoRoot, 'hosts/example.yaml'), 'utf8')) as {
          hosts: { name: string; address: string; ssh?: object }[];
        };
        doc.hosts = [
          { ...doc.hosts[0]!, address: own, ssh: { user: 'root', port: 1, identityFile: key } },
        ];
        const inv = join(dir, 'inv.yaml');
        writeFileSync(inv, stringify(doc));
        const r = hardwire(
          [
            'upgrade',
            cmd,
            '--to',
            'v1.37.2',
            '--inventory',
            inv,
            '--state-dir',
            join(dir, 'state'),
            '--quiet',
            ...extra,
          ],
          { timeoutMs: 60_000 },
        );
        expect(r.code, r.stderr).toBe(2);
        expect(r.stdout).toBe('');
        const lines = r.stderr.trim().split('\n');
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(
          new RegExp(
            `^error: verify: cp-0: ssh-connect: cannot connect to ${own.replace(/\./g, '\\.')}:1 `,
          ),
        );
        expect(lines[0]).toContain(tail);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
