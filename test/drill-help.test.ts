// `hardwire drill --help` names every drill the CLI accepts, each with its curriculum id. The list of
// drills comes from the commander tree that parses argv, so a drill added there and not here fails.
import { describe, expect, it } from 'vitest';
import { rootCli } from '../cli/command.ts';
import { declare } from '../cli/commands/drill.ts';
import { hardwire } from './helpers/cli.ts';

describe('drill --help', () => {
  it('lists every drill subcommand with its curriculum id', () => {
    // Every drill: each subcommand but "list", which lists them.
    const accepted = declare(rootCli())
      .commands.map((c) => c.name())
      .filter((n) => n !== 'list');
    expect(accepted.length).toBeGreaterThanOrEqual(7);
    const r = hardwire(['drill', '--help']);
    expect(r.code).toBe(0);
    const listed = r.stdout.split('\n').flatMap((l) => {
      // "  NAME  3.C5: …", or a drill without a curriculum id (cli/commands/drill.ts
      // NO_CURRICULUM_ID) under its name: "  NAME  NAME: …".
      const m = /^ {2}([a-z0-9-]+) +(\S+)/.exec(l);
      return m && (/^3\.C?\d\b/.test(m[2]!) || m[2] === `${m[1]}:`) ? [m[1]!] : [];
    });
    expect(listed.sort()).toEqual([...accepted].sort());
    for (const id of ['3.C1', '3.C2', '3.C3', '3.C4', '3.C5']) expect(r.stdout).toContain(`${id}:`);
  });
});
