// Config fields' defaults across an upgrade (issue 24): the value a field takes when the file
// leaves it out, as the flag map records it at each tag (analyzer/cfgdefaults.go: SetDefaults_<Type>'s
// assignment, else the doc comment's `Default:` line), compared after spelling differences that
// change nothing ("4h" in a comment, 4h0m0s from the code).
import type { ConfigFieldEntry, FlagMap } from '../flags/map.ts';
import { siteRef } from '../flags/map.ts';
import { goDurationNs } from '../../lib/go-duration.ts';

export interface DefaultSide {
  value: string;
  /** `defaults`: SetDefaults_<Type> assigns it; `doc`: only the field's `Default:` comment says it. */
  from: 'defaults' | 'doc';
  /** module@version/file:line of the assignment or the comment line. */
  at: string;
}

/** A field whose default differs between the tags, cited at both (null: no default recorded there). */
export interface DefaultChange {
  key: string;
  from: DefaultSide | null;
  to: DefaultSide | null;
}

export function defaultSide(f: ConfigFieldEntry | undefined): DefaultSide | null {
  return f?.default
    ? { value: f.default.value, from: f.default.from, at: siteRef(f.default.at) }
    : null;
}

/** The value compared: unquoted, a duration or a number by its magnitude. */
function normal(v: string): string {
  const s = v.trim().replace(/^"(.*)"$/, '$1');
  const d = goDurationNs(s);
  if (d !== undefined) return `${d}ns`;
  return s !== '' && !Number.isNaN(Number(s)) ? String(Number(s)) : s;
}

export function defaultChanged(a: DefaultSide | null, b: DefaultSide | null): boolean {
  if (!a && !b) return false;
  return !a || !b || normal(a.value) !== normal(b.value);
}

export function defaultText(d: DefaultSide | null): string {
  return d
    ? `${d.value} (${d.from === 'doc' ? 'doc comment' : 'SetDefaults'} at ${d.at})`
    : 'no default recorded';
}

/** Fields both tags' types have, that the file leaves unset, whose default changes: they change behaviour silently. */
export function unsetDefaultChanges(
  passed: readonly string[],
  from: FlagMap,
  to: FlagMap,
): DefaultChange[] {
  // Set: the key itself, a container of a key the file sets, or inside a value the file sets whole.
  const isSet = (key: string) =>
    passed.some((p) => p === key || p.startsWith(`${key}.`) || key.startsWith(`${p}.`));
  const target = new Map((to.config?.fields ?? []).map((f) => [f.key, f]));
  const out: DefaultChange[] = [];
  for (const a of from.config?.fields ?? []) {
    const b = target.get(a.key);
    if (!b || isSet(a.key)) continue;
    const change = { key: a.key, from: defaultSide(a), to: defaultSide(b) };
    if (defaultChanged(change.from, change.to)) out.push(change);
  }
  return out;
}

/** The one line listing them, for text, Markdown and HTML. */
export function unsetDefaultsLine(changes: readonly DefaultChange[], toVersion: string): string {
  if (!changes.length)
    return `no config field the file leaves unset changes its default at ${toVersion}`;
  return `default changes at ${toVersion} of config fields the file leaves unset (${changes.length}): ${changes.map((c) => `${c.key} ${defaultText(c.from)} → ${defaultText(c.to)}`).join('; ')}`;
}
