// README.md is the front door (issue 40). Its command table names only commands the CLI has, and
// every command the CLI has (the tree comes from cli/registry.ts's declareAll, the same commander
// tree that parses argv); every relative link in README.md and docs/*.md resolves to a file; and the
// README stays short, with no dated log in it (dated figures live in docs/measurements.md).
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { rootCli, type Cli } from '../cli/command.ts';
import { declareAll } from '../cli/registry.ts';
import { repoRoot } from '../lib/paths.ts';

const README = join(repoRoot, 'README.md');
const DOCS = join(repoRoot, 'docs');

/** Each command its table names: the `hardwire …` spans of each row's first cell, under "## Commands". */
function tableCommands(markdown: string): { row: string; path: string }[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => /^## Commands\s*$/.test(l));
  if (start < 0) throw new Error('README.md has no "## Commands" section');
  const out: { row: string; path: string }[] = [];
  let inTable = false;
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith('## ')) break;
    if (!line.startsWith('|')) {
      if (inTable) break;
      continue;
    }
    inTable = true;
    const first = line.split('|')[1]?.trim() ?? '';
    if (first === 'command' || /^:?-+:?$/.test(first)) continue;
    const spans = [...first.matchAll(/`hardwire ([^`]+)`/g)].map((m) => m[1]!.trim());
    if (spans.length === 0) out.push({ row: line, path: '' });
    for (const path of spans) out.push({ row: line, path });
  }
  return out;
}

/** Every command path of the CLI ("lab up", "etcd snapshot save"), and which of them have no subcommands. */
async function commandTree(): Promise<{ all: Set<string>; leaves: Set<string> }> {
  const all = new Set<string>();
  const leaves = new Set<string>();
  const walk = (cmd: Cli, above: string[]): void => {
    const path = [...above, cmd.name()];
    all.add(path.join(' '));
    const subs = cmd.commands as Cli[];
    if (subs.length === 0) leaves.add(path.join(' '));
    for (const sub of subs) walk(sub, path);
  };
  for (const cmd of await declareAll(rootCli())) walk(cmd, []);
  return { all, leaves };
}

/** Relative link targets in a Markdown file, outside code blocks and code spans; anchors dropped. */
function relativeLinks(markdown: string): string[] {
  const text = markdown.replace(/^```[^\n]*\n[\s\S]*?^```[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
  const targets = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map(
    (m) => m[1]!,
  );
  return targets
    .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('#'))
    .map((t) => t.split('#')[0]!)
    .filter((t) => t !== '');
}

const markdownFiles = [
  README,
  ...readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(DOCS, f)),
];

describe('README.md, the front door', () => {
  const readme = readFileSync(README, 'utf8');

  it('names in its command table only commands the CLI has', async () => {
    const { all } = await commandTree();
    const rows = tableCommands(readme);
    expect(rows.length).toBeGreaterThan(20);
    const missing = rows
      .filter((r) => !all.has(r.path))
      .map((r) => (r.path ? `hardwire ${r.path}` : `a row naming no command: ${r.row}`));
    expect(
      missing,
      'rows of the README command table that are not commands of cli/hardwire.ts',
    ).toEqual([]);
  });

  it('names every command and subcommand the CLI has', async () => {
    const { leaves } = await commandTree();
    const named = new Set(tableCommands(readme).map((r) => r.path));
    const absent = [...leaves].filter((p) => !named.has(p)).map((p) => `hardwire ${p}`);
    expect(absent, 'commands of cli/hardwire.ts missing from the README command table').toEqual([]);
  });

  it('is at most 250 lines, with no date in it', () => {
    const lines = readme.endsWith('\n') ? readme.slice(0, -1).split('\n') : readme.split('\n');
    expect(lines.length).toBeLessThanOrEqual(250);
    const dated = lines.filter((l) => /20\d\d-\d\d-\d\d/.test(l));
    expect(dated, 'dated lines belong in docs/measurements.md or CHANGELOG.md').toEqual([]);
  });

  it('links only to files that exist, as do the docs', () => {
    expect(markdownFiles.length).toBeGreaterThan(10);
    const broken: string[] = [];
    let checked = 0;
    for (const file of markdownFiles) {
      for (const target of relativeLinks(readFileSync(file, 'utf8'))) {
        checked++;
        const to = resolve(dirname(file), decodeURI(target));
        if (!existsSync(to)) broken.push(`${relative(repoRoot, file)} → ${target}`);
      }
    }
    expect(checked).toBeGreaterThan(30);
    expect(broken).toEqual([]);
  });
});
