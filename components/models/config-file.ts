// A component config file (KubeletConfiguration, KubeProxyConfiguration) as YAML, every field
// preceded by the reason it is set and where Kubernetes reads it, as the units' flags are.
import { stringify } from 'yaml';

export interface ConfigField {
  key: string;
  value: unknown;
  /** Why it is set; then the source line, as `file:line` in the pinned module. */
  why: string;
  cite?: string;
}

export function configYaml(head: { apiVersion: string; kind: string; comment: string }, fields: ConfigField[]): string {
  const lines = [...head.comment.split('\n').map((l) => `# ${l}`), `apiVersion: ${head.apiVersion}`, `kind: ${head.kind}`];
  for (const f of fields) {
    lines.push(`# ${f.why}`);
    if (f.cite) lines.push(`#   ${f.cite}`);
    lines.push(stringify({ [f.key]: f.value }, { lineWidth: 0 }).trimEnd());
  }
  return `${lines.join('\n')}\n`;
}
