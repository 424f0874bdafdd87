// The config-file fields the rendered kubelet and kube-proxy files set, checked in that
// component's own config section (the flag map's `config`: the versioned type's json-tagged
// fields, analyzer/config.go) at both versions: unchanged, default-changed, deprecated, renamed or
// removed. Defaults and `Deprecated:` doc text come from analyzer/cfgdefaults.go, cited at both tags.
import type { ConfigFieldEntry, FlagMap } from '../flags/map.ts';
import { siteRef } from '../flags/map.ts';
import { defaultChanged, defaultSide, defaultText, type DefaultSide } from './field-defaults.ts';

/** A config-file field by its json path (`authentication.x509.clientCAFile`), the value as JSON. */
export interface PassedField {
  key: string;
  value: string;
}

export type FieldStatus = 'unchanged' | 'default-changed' | 'deprecated' | 'renamed' | 'removed';

export interface FieldSide {
  version: string;
  /** module@version/file:line of the json-tagged field: the file's registration. */
  registeredAt: string;
  /** Its value when the file leaves it out, cited (null: none recorded). */
  default: DefaultSide | null;
  /** Its doc comment's `Deprecated:` text, cited at that line. */
  deprecated?: { message: string; at: string };
}

export interface FieldRow {
  key: string;
  value: string;
  status: FieldStatus;
  from: FieldSide | null;
  to: FieldSide | null;
  /** For `renamed`: the target's key whose value lands in the same internal field. */
  renamedTo?: { key: string; registeredAt: string };
  /** For a key gone at the target: the file that declares the target's type without it. */
  absentFrom?: string;
  note: string;
}

/**
 * What the target's binary does with a key its type no longer has: strict decoding fails, and it
 * decodes leniently, logs, and runs without the setting. Keyed by component@Kubernetes version,
 * read at that tag.
 */
const LENIENT: Readonly<Record<string, string>> = {
  'kubelet@v1.37.2':
    'k8s.io/kubernetes@v1.37.2/pkg/kubelet/kubeletconfig/util/codec/codec.go:78 and :102',
  'kube-proxy@v1.37.2': 'k8s.io/kubernetes@v1.37.2/cmd/kube-proxy/app/options.go:482 and :502',
};

function fieldsOf(m: FlagMap): ConfigFieldEntry[] {
  return m.config?.fields ?? [];
}

const side = (f: ConfigFieldEntry, m: FlagMap): FieldSide => ({
  version: m.componentVersion,
  registeredAt: siteRef(f.registeredAt),
  default: defaultSide(f),
  ...(f.deprecated
    ? { deprecated: { message: f.deprecated.message, at: siteRef(f.deprecated.at) } }
    : {}),
});

/** A key both types have: deprecated at the target, else its default changed, else unchanged; cited at both tags. */
function kept(
  a: FieldSide | null,
  b: FieldSide,
  from: string,
): { status: FieldStatus; note: string } {
  const changed = a !== null && defaultChanged(a.default, b.default);
  const defaults = changed ? `default ${defaultText(a.default)} → ${defaultText(b.default)}` : '';
  if (b.deprecated) {
    const before = a?.deprecated
      ? `deprecated at ${a.version} too (${a.deprecated.at}); `
      : `newly deprecated (not at ${a?.version ?? from}); `;
    return {
      status: 'deprecated',
      note: `${before}at ${b.version}: "${b.deprecated.message}" (${b.deprecated.at})${defaults ? `; ${defaults}` : ''}`,
    };
  }
  if (changed) return { status: 'default-changed', note: defaults };
  return { status: 'unchanged', note: a ? '' : `not in the file's type at ${from}` };
}

/** The file of the target's config type (its package's json-tagged lines), named when a key is missing from it. */
function typeFile(m: FlagMap): string {
  const type = m.config?.type ?? '';
  const pkg = type.slice(0, type.lastIndexOf('.'));
  const f = fieldsOf(m).find((x) => x.registeredAt.package === pkg);
  return f
    ? `${f.registeredAt.module}@${f.registeredAt.version}/${f.registeredAt.file} (${type.slice(pkg.length + 1)})`
    : type;
}

/** A key gone at the target whose internal field a key new at the target fills: the data's only evidence of a rename. */
function renameOf(
  old: ConfigFieldEntry | undefined,
  from: FlagMap,
  to: FlagMap,
): ConfigFieldEntry | undefined {
  if (!old?.field) return undefined;
  const before = new Set(fieldsOf(from).map((f) => f.key));
  return fieldsOf(to).find((f) => !before.has(f.key) && f.field === old.field);
}

function row(p: PassedField, from: FlagMap, to: FlagMap): FieldRow {
  const a = fieldsOf(from).find((f) => f.key === p.key);
  const b = fieldsOf(to).find((f) => f.key === p.key);
  const base = {
    key: p.key,
    value: p.value,
    from: a ? side(a, from) : null,
    to: b ? side(b, to) : null,
  };
  if (base.to) return { ...base, ...kept(base.from, base.to, from.componentVersion) };
  const lenient = LENIENT[`${to.component}@${to.kubernetesVersion}`];
  const drops = lenient
    ? `; ${to.component} ${to.kubernetesVersion} decodes the file leniently and runs without it (${lenient})`
    : '';
  const renamed = renameOf(a, from, to);
  if (renamed) {
    return {
      ...base,
      status: 'renamed',
      renamedTo: { key: renamed.key, registeredAt: siteRef(renamed.registeredAt) },
      absentFrom: typeFile(to),
      note: `gone from ${to.config?.type} at ${to.kubernetesVersion}; ${renamed.key} fills the same field (${renamed.field})${drops}`,
    };
  }
  return {
    ...base,
    status: 'removed',
    absentFrom: typeFile(to),
    note: `${to.config?.type} at ${to.kubernetesVersion} has no ${p.key}${drops}`,
  };
}

/** The rows of one component's config fields, in file order. */
export function planFields(passed: PassedField[], from: FlagMap, to: FlagMap): FieldRow[] {
  return passed.map((p) => row(p, from, to));
}
