// A node component's config file as json paths and values, at the flag map's granularity: what
// compare's node rows and the k0s worker's reasons both read.
import { parse as parseYaml } from 'yaml';
import { loadFlagMap } from '../../core/flags/map.ts';
import type { NodeComponent } from './node-types.ts';

/** The json paths the flag map has for a component's config file. */
export function configKeys(component: NodeComponent, version: string): Set<string> {
  try {
    return new Set(loadFlagMap(component, version).config?.fields.map((f) => f.key) ?? []);
  } catch {
    return new Set(); // no map at this version: the whole file is one level of keys
  }
}

/**
 * A config file's values by json path, at the flag map's granularity: an object is walked into while
 * the map has fields below it (authentication.x509.clientCAFile), else shown whole as JSON
 * (evictionHard, featureGates). apiVersion and kind are the file's type, not fields.
 */
export function configValues(text: string, known: Set<string>): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (obj: Record<string, unknown>, prefix: string) => {
    for (const [k, v] of Object.entries(obj)) {
      if (!prefix && (k === 'apiVersion' || k === 'kind')) continue;
      const path = prefix ? `${prefix}.${k}` : k;
      const nested =
        v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length > 0;
      if (nested && [...known].some((x) => x.startsWith(`${path}.`)))
        walk(v as Record<string, unknown>, path);
      else out.set(path, typeof v === 'string' ? v : JSON.stringify(v));
    }
  };
  const doc = parseYaml(text) as unknown;
  if (doc && typeof doc === 'object') walk(doc as Record<string, unknown>, '');
  return out;
}
