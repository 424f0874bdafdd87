// A component config file (KubeletConfiguration, KubeProxyConfiguration) as YAML, every field
// preceded by the reason it is set and where Kubernetes reads it, as the units' flags are.
import { stringify } from 'yaml';

/** A source line in a pinned Go module: `mod` names the module (the model's header says which), `holds` is text on that line. */
export interface Cite {
  mod: 'K' | 'KB' | 'KP' | 'CB';
  file: string;
  line: number;
  holds: string;
}

export interface ConfigField {
  key: string;
  value: unknown;
  /** Why it is set. */
  why: string;
  /** Where Kubernetes declares or reads it; test/worker-citations.test.ts re-opens each. */
  cite: Cite;
}

/** The module directory, under the Go module cache, of each citation's `mod`. */
export const CITED_MODULES: Record<Cite['mod'], string> = {
  K: 'k8s.io/kubernetes@v1.36.3',
  KB: 'k8s.io/kubelet@v0.36.3',
  KP: 'k8s.io/kube-proxy@v0.36.3',
  CB: 'k8s.io/component-base@v0.36.3',
};

export function configYaml(head: { apiVersion: string; kind: string; comment: string }, fields: ConfigField[]): string {
  const mods = Object.entries(CITED_MODULES).map(([m, dir]) => `${m} = ${dir}`).join(', ');
  const lines = [...head.comment.split('\n').map((l) => `# ${l}`), `# Citations: ${mods}, in the Go module cache.`, `apiVersion: ${head.apiVersion}`, `kind: ${head.kind}`];
  for (const f of fields) {
    lines.push(`# ${f.why}`, `#   ${f.cite.mod} ${f.cite.file}:${f.cite.line}`);
    lines.push(stringify({ [f.key]: f.value }, { lineWidth: 0 }).trimEnd());
  }
  return `${lines.join('\n')}\n`;
}
