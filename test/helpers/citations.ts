// Every citation of committed flag maps, re-opened in the module cache independently of
// harness/flags/verify.ts, straight from the JSON: each cited line must be the one the map quotes and
// hold what the citation claims (flags.test.ts, for each release's maps and each etcd-only map).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { ConfigSection, FlagEntry, Site } from '../../core/flags/map.ts';
import { moduleDir } from './modcache.ts';

/** The maps' files, each `{ component, flags, config? }` as committed; returns how many citations were checked. */
export function recheckCitations(mapFiles: string[]): {
  citations: number;
  configCitations: number;
} {
  const files = new Map<string, string[]>();
  const lineAt = (s: Site): string => {
    const file = join(moduleDir(s.module, s.version), s.file);
    if (!files.has(file)) {
      expect(existsSync(file), `${file} is in the module cache`).toBe(true);
      files.set(file, readFileSync(file, 'utf8').split('\n'));
    }
    const line = files.get(file)![s.line - 1];
    expect(line, `${s.module}@${s.version}/${s.file}:${s.line} exists`).toBeDefined();
    return line!;
  };
  // The map quotes each cited line (cut at 200 characters with "..."): the line there must be that text.
  const quoted = (s: Site) => {
    const line = lineAt(s).trim();
    const where = `${s.module}@${s.version}/${s.file}:${s.line}`;
    if (s.excerpt.endsWith('...'))
      expect(
        line.startsWith(s.excerpt.slice(0, -3)),
        `${where} holds "${s.excerpt}", not "${line}"`,
      ).toBe(true);
    else expect(line, where).toBe(s.excerpt.trim());
    return line;
  };
  let citations = 0;
  let configCitations = 0;
  for (const file of mapFiles) {
    const map = JSON.parse(readFileSync(file, 'utf8')) as {
      component: string;
      flags: FlagEntry[];
      config?: ConfigSection;
    };
    const c = map.component;
    for (const f of map.flags) {
      for (const r of [f.registeredAt, ...(f.alsoRegisteredAt ?? [])]) {
        if (!r) continue;
        citations++;
        const line = quoted(r);
        // The flag's name literal is on the registering line, or on the line that passes it in, or on its constant's declaration.
        // Or with '_' for '-': registered so (concurrent_rc_syncs, cAdvisor's storage_driver_user), printed and accepted with '-' (WordSepNormalizeFunc).
        const name = r.calledFrom ? (r.nameArg ?? f.name) : f.name;
        const names =
          r.calledFrom || r.nameConst
            ? [
                r.calledFrom ? lineAt(r.calledFrom) : line,
                r.nameConst ? lineAt(r.nameConst) : '',
              ].join('\n')
            : line;
        const literal =
          [name, name.replaceAll('-', '_')]
            .map((n) => JSON.stringify(n))
            .find((l) => names.includes(l)) ?? JSON.stringify(name);
        expect(names, `${c} --${f.name} registration names ${literal}`).toContain(literal);
      }
      for (const r of f.consumedAt) {
        citations++;
        const line = quoted(r);
        expect(line, `${c} --${f.name} read at ${r.file}:${r.line} holds ${r.selector}`).toContain(
          r.selector.replace(/^[."]|"$/g, ''),
        );
        if (!r.condition) continue;
        // A conditional read's condition: a branch's line (if, case, or an && / || operand) that holds the quoted text.
        citations++;
        const m = /^(.+?)@(v[^/]+)\/(.+):(\d+)$/.exec(r.condition.at);
        expect(m, `${c} --${f.name} condition at ${r.condition.at}`).not.toBeNull();
        // Over several lines (`a &&` / `b {`), the text is its lines from there, each trimmed, joined by a space.
        const at = { module: m![1]!, version: m![2]!, file: m![3]!, line: Number(m![4]) } as Site;
        const lines: string[] = [];
        for (
          let n = at.line;
          lines.join(' ').length < r.condition.text.replace(/\.\.\.$/, '').length;
          n++
        ) {
          const l = lineAt({ ...at, line: n }).trim();
          if (l) lines.push(l);
        }
        const cond = lines.join(' ');
        expect(
          r.condition.text.startsWith(lineAt(at).trim().slice(0, 197)),
          `${r.condition.at} begins the condition`,
        ).toBe(true);
        if (r.condition.text.endsWith('...'))
          expect(cond.startsWith(r.condition.text.slice(0, -3)), r.condition.at).toBe(true);
        else expect(cond, `${c} --${f.name} condition at ${r.condition.at}`).toBe(r.condition.text);
        expect(cond, `${c} --${f.name} condition at ${r.condition.at}`).toMatch(
          /^(?:(?:\}\s*else\s+)?if\b|case\b)|&&|\|\|/,
        );
        // Each operand it names a flag for is in it.
        for (const operand of Object.keys(r.condition.tests ?? {}))
          expect(cond, `${r.condition.at} tests ${operand}`).toContain(operand);
      }
    }
    // Config fields: the declaring line holds the Go field and its json tag; each read its selector.
    for (const f of map.config?.fields ?? []) {
      citations += 1 + (f.convertedAt ? 1 : 0) + f.consumedAt.length;
      configCitations += 1 + (f.convertedAt ? 1 : 0) + f.consumedAt.length;
      const tag = f.key.slice(f.key.lastIndexOf('.') + 1);
      expect(quoted(f.registeredAt), `${c} config field ${f.key} declaration`).toMatch(
        new RegExp(`^${f.goField}\\s.*json:"${tag}[",]`),
      );
      if (f.convertedAt)
        expect(quoted(f.convertedAt), `${c} config field ${f.key} conversion`).toContain(
          `.${f.path.slice(f.path.lastIndexOf('.') + 1)} = `,
        );
      for (const r of f.consumedAt)
        expect(quoted(r), `${c} config field ${f.key} read at ${r.file}:${r.line}`).toContain(
          r.selector.replace(/^\./, ''),
        );
      // Its default: SetDefaults' assignment to the field, or the doc's Default: line; its Deprecated: line.
      const extra = (f.default ? 1 : 0) + (f.deprecated ? 1 : 0);
      citations += extra;
      configCitations += extra;
      if (f.default?.from === 'defaults')
        expect(quoted(f.default.at), `${c} config field ${f.key} default`).toMatch(
          new RegExp(`\\.${f.goField}[\\w.]* = `),
        );
      if (f.default?.from === 'doc')
        expect(quoted(f.default.at), `${c} config field ${f.key} default`).toMatch(
          /^\/\/ Default:/,
        );
      if (f.deprecated)
        expect(quoted(f.deprecated.at), `${c} config field ${f.key} deprecation`).toMatch(
          /^\/\/ Deprecated:/,
        );
    }
  }
  return { citations, configCitations };
}
