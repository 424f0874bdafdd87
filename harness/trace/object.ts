// The one object `trace apply` creates: read from -f, or a ConfigMap named for the moment, written
// next to the cluster state. The key its create writes in etcd ends in its namespace and name.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { InputError } from '../../lib/errors.ts';

export interface TraceObject {
  file: string;
  apiVersion?: string;
  kind: string;
  name: string;
  namespace?: string;
  /** A ConfigMap's data keys (what --webhook-reject's webhook reads). */
  dataKeys?: string[];
}

export function readObject(file: string): TraceObject {
  if (!existsSync(file))
    throw new InputError('-f', `${file} does not exist; give a YAML file with one object`);
  const docs = parseAllDocuments(readFileSync(file, 'utf8')).filter((d) => d.contents !== null);
  if (docs.length !== 1 || docs[0]!.errors.length)
    throw new InputError(
      '-f',
      `${file} must hold exactly one YAML object (found ${docs.length}${docs[0]?.errors.length ? ', with errors' : ''})`,
    );
  const o = docs[0]!.toJS() as {
    apiVersion?: unknown;
    kind?: unknown;
    metadata?: { name?: unknown; namespace?: unknown };
    data?: unknown;
  };
  if (typeof o.kind !== 'string' || !o.kind)
    throw new InputError('-f', `${file}: the object has no kind`);
  const name = o.metadata?.name;
  if (typeof name !== 'string' || !name)
    throw new InputError(
      '-f',
      `${file}: the object has no metadata.name (trace apply traces a create by its name; generateName is not supported)`,
    );
  const ns = o.metadata?.namespace;
  const keys = o.data && typeof o.data === 'object' ? Object.keys(o.data) : undefined;
  return {
    file,
    ...(typeof o.apiVersion === 'string' ? { apiVersion: o.apiVersion } : {}),
    kind: o.kind,
    name,
    ...(typeof ns === 'string' && ns ? { namespace: ns } : {}),
    ...(keys ? { dataKeys: keys } : {}),
  };
}

/**
 * Without -f: a ConfigMap in the default namespace, a new name each run (a create, not a patch);
 * with `deny`, it also holds the data key hardwire's webhook denies (--webhook-reject).
 */
export function defaultObject(dir: string, now = new Date(), deny?: string): TraceObject {
  const name = `hardwire-trace-${now.toISOString().replace(/[-:T]/g, '').slice(0, 14)}`;
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: default\ndata:\n  traced-by: hardwire trace apply\n${deny ? `  ${deny}: "the webhook denies this key"\n` : ''}`,
  );
  return {
    file,
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name,
    namespace: 'default',
    dataKeys: ['traced-by', ...(deny ? [deny] : [])],
  };
}
