// A flag value with `$`, `%`, quotes and spaces, rendered into a real unit and read back three ways:
// systemd-analyze verify, systemd's own parse of the unit (systemd --test dumps the argv it would
// run) and an unescaper written here from systemd.syntax(7) and systemd.service(5) "Command lines".
import { beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hardwire } from './helpers/cli.ts';
import { tempDir } from './helpers/tmp.ts';
import { requireInputs, skipWithoutInputs } from './helpers/inputs.ts';

const inventory = join(import.meta.dirname, '..', 'hosts', 'example.yaml');
const SYSTEMD = '/usr/lib/systemd/systemd';
const FLAG = 'leader-elect-resource-name';
// Every layer at once: an environment variable both ways, a literal `$$`, a specifier systemd knows
// (%n, the unit name) and one it does not (%Q), a literal `%%`, double and single quotes, spaces.
const VALUE = `a $HOME \${PATH} $$ 100%n %Q %% "q" it's z`;

let unit: string;

beforeAll(() => {
  const dir = tempDir();
  const inv = join(dir, 'inv.yaml');
  const src = readFileSync(inventory, 'utf8');
  // JSON is YAML: the value goes in as a double-quoted scalar (through a function: a replacement string would read `$$`).
  const text = src.replace(
    'extraSANs: []',
    () => `extraSANs: []\n  extraArgs:\n    kube-scheduler: {${FLAG}: ${JSON.stringify(VALUE)}}`,
  );
  expect(text).not.toBe(src);
  writeFileSync(inv, text);
  const r = hardwire(['render', '--inventory', inv, '--state-dir', join(dir, 's')]);
  expect(r.code, r.stderr).toBe(0);
  unit = join(
    dir,
    's',
    'demo',
    'hosts',
    'cp-0',
    'etc',
    'systemd',
    'system',
    'kube-scheduler.service',
  );
});

/**
 * ExecStart= as systemd reads it, up to environment expansion: lines joined at a trailing backslash
 * (which becomes a space; comment lines in between are dropped), then specifiers (`%%` is `%`; any
 * other would be replaced, so it fails here), then words split at unquoted whitespace, quotes
 * removed and C escapes undone.
 */
function execStart(text: string): string[] {
  const lines = text.split('\n');
  const i = lines.findIndex((l) => l.startsWith('ExecStart='));
  let line = lines[i]!.slice('ExecStart='.length);
  for (let j = i + 1; line.endsWith('\\'); j++) {
    if (/^\s*[#;]/.test(lines[j]!)) continue;
    line = `${line.slice(0, -1)} ${lines[j]!}`;
  }
  const resolved = line.replace(/%(.)/g, (_, c: string) => {
    if (c === '%') return '%';
    throw new Error(`specifier %${c} left unescaped: systemd would replace it`);
  });
  const words: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  const escapes: Record<string, string> = {
    '\\': '\\',
    '"': '"',
    "'": "'",
    n: '\n',
    t: '\t',
    ' ': ' ',
  };
  for (let k = 0; k < resolved.length; k++) {
    const c = resolved[k]!;
    if (c === '\\') {
      const e = escapes[resolved[++k]!];
      if (e === undefined) throw new Error(`unexpected escape \\${resolved[k]}`);
      word = (word ?? '') + e;
    } else if (quote) {
      if (c === quote) quote = undefined;
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= '';
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (quote) throw new Error('unbalanced quotes');
  if (word !== undefined) words.push(word);
  return words;
}

/** The last layer, when the command runs: `$$` is `$`; `$NAME` or `${NAME}` would be expanded, so it fails here. */
function unescapeEnv(word: string): string {
  return word.replace(/\$(\$|\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*|.|$)/g, (m, rest: string) => {
    if (rest === '$') return '$';
    throw new Error(`"${m}" left unescaped: systemd would expand it`);
  });
}

/** The words of a "Command Line:" in systemd's dump: bare, or double-quoted with \" \\ \$ \` escaped. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const m of line.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g))
    words.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]!);
  return words;
}

describe('systemd escaping, rendered', () => {
  it('the unescaper reads the flag back as given, one word, and every other flag as one word each', () => {
    const text = readFileSync(unit, 'utf8');
    const argv = execStart(text).map(unescapeEnv);
    expect(argv).toContain(`--${FLAG}=${VALUE}`);
    expect(argv[0]).toBe('/usr/local/bin/kube-scheduler');
    // No word split or merged: one argv entry per --flag line.
    expect(argv.length).toBe(1 + text.split('\n').filter((l) => /^\s+--/.test(l)).length);
  });

  it('systemd-analyze verify finds nothing but the binary missing here', () => {
    const r = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8' });
    const problems = (r.stderr + r.stdout)
      .split('\n')
      .filter(
        (l) =>
          l.trim() &&
          !/Command \/usr\/local\/bin\/kube-scheduler is not executable: No such file or directory/.test(
            l,
          ),
      );
    expect(problems).toEqual([]);
  });

  it.skipIf(skipWithoutInputs(SYSTEMD))(
    'systemd itself parses ExecStart to the value given (systemd --test, as an unprivileged user)',
    () => {
      requireInputs(SYSTEMD);
      // Test mode refuses root, and reads only SYSTEMD_UNIT_PATH: a directory the nobody user can read,
      // holding the unit and a default.target that pulls it in.
      const dir = join(tempDir(), 'units');
      mkdirSync(dir);
      chmodSync(join(dir, '..'), 0o755);
      chmodSync(dir, 0o755);
      writeFileSync(join(dir, 'kube-scheduler.service'), readFileSync(unit), { mode: 0o644 });
      writeFileSync(
        join(dir, 'default.target'),
        '[Unit]\nDescription=escape test\nWants=kube-scheduler.service\n',
        { mode: 0o644 },
      );
      const cmd =
        process.getuid?.() === 0
          ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', SYSTEMD]
          : [SYSTEMD];
      const r = spawnSync(
        cmd[0]!,
        [...cmd.slice(1), '--test', '--system', '--log-target=console'],
        { encoding: 'utf8', env: { ...process.env, SYSTEMD_UNIT_PATH: dir }, timeout: 60_000 },
      );
      expect(r.status, r.stderr).toBe(0);
      const lines = r.stdout
        .split('\n')
        .filter((l) => l.includes('Command Line: /usr/local/bin/kube-scheduler'));
      expect(lines.length, "the dump holds the unit's ExecStart once").toBe(1);
      // systemd stops before environment expansion: apply that last layer as it would at exec time.
      const argv = shellWords(lines[0]!.replace(/^\s*Command Line: /, '')).map(unescapeEnv);
      expect(argv).toContain(`--${FLAG}=${VALUE}`);
      expect(argv).toEqual(execStart(readFileSync(unit, 'utf8')).map(unescapeEnv));
    },
  );
});
