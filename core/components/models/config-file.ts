// A component config file (KubeletConfiguration, KubeProxyConfiguration) as YAML, every field
// preceded by the reason it is set and, from the flag map, where Kubernetes declares and reads it,
// as the units' flags are.
import { stringify } from 'yaml';

export interface ConfigField {
  key: string;
  value: unknown;
  /** Why it is set. Its citations come from the flag map's config fields (core/flags/data). */
  why: string;
}

/**
 * The flag map's citation of one config field by its json path (`authentication.x509.clientCAFile`):
 * declared at …, read at …. Undefined when the map has no data for this version.
 */
export type ConfigCiter = (component: string, key: string) => string | undefined;

/** The module directory, under the Go module cache, of each short module name a reason cites by file:line. */
export const CITED_MODULES = {
  K: 'k8s.io/kubernetes@v1.36.3',
} as const;

/** The json paths a value sets: an object's leaves (authentication.x509.clientCAFile), else the key itself. */
export function leafKeys(key: string, value: unknown): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [key];
  return Object.entries(value).flatMap(([k, v]) => leafKeys(`${key}.${k}`, v));
}

export function configYaml(
  head: { apiVersion: string; kind: string; comment: string },
  fields: ConfigField[],
  cite?: (key: string) => string | undefined,
): string {
  const mods = Object.entries(CITED_MODULES)
    .map(([m, dir]) => `${m} = ${dir}`)
    .join(', ');
  const lines = [
    ...head.comment.split('\n').map((l) => `# ${l}`),
    `# Reasons cite ${mods}, in the Go module cache; each field's declaration and read site are the flag map's.`,
    `apiVersion: ${head.apiVersion}`,
    `kind: ${head.kind}`,
  ];
  for (const f of fields) {
    lines.push(`# ${f.why}`);
    for (const k of cite ? leafKeys(f.key, f.value) : []) {
      const c = cite!(k);
      if (c) lines.push(`#   ${k}: ${c}`);
    }
    lines.push(stringify({ [f.key]: f.value }, { lineWidth: 0 }).trimEnd());
  }
  return `${lines.join('\n')}\n`;
}
