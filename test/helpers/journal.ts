// Evidence read on the host itself, not from a drill's report: a journal line, a file's hash,
// what systemd says about a unit.
import type { TestLab } from './lab.ts';

export interface JournalLineRef {
  host: string;
  unit: string;
  at: string;
  line: string;
}

/** The captured line must be in that host's journal, verbatim: it was read, not written by the drill. */
export async function inJournal(lab: TestLab, c: JournalLineRef): Promise<boolean> {
  const s = await lab.ssh(c.host);
  try {
    const since = Math.floor(new Date(c.at).getTime() / 1000) - 1;
    const r = await s.exec(
      [
        'journalctl',
        '-u',
        c.unit,
        `--since=@${since}`,
        `--until=@${since + 3}`,
        '-o',
        'cat',
        '--no-pager',
      ],
      { allowFail: true },
    );
    return r.stdout.split('\n').includes(c.line);
  } finally {
    await s.close();
  }
}

/** Runs one read command on a host and returns its stdout. */
export async function onHost(lab: TestLab, host: string, argv: string[]): Promise<string> {
  const s = await lab.ssh(host);
  try {
    return (await s.exec(argv, { allowFail: true })).stdout;
  } finally {
    await s.close();
  }
}

/**
 * sha256 of each file that `find <findArgs>` lists on each host, hashed there by sha256sum:
 * `host:path` -> sha256. Read on the hosts, so a drill or a command cannot report it for them.
 */
export async function hashesOnHosts(
  lab: TestLab,
  hosts: readonly string[],
  findArgs: string[],
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const host of hosts) {
    const text = await onHost(lab, host, ['find', ...findArgs, '-exec', 'sha256sum', '{}', '+']);
    for (const line of text.trim().split('\n').filter(Boolean)) {
      const [sha, path] = line.split(/\s+/);
      out[`${host}:${path}`] = sha!;
    }
  }
  return out;
}
