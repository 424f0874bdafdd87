// EncryptionConfiguration for Secrets at rest. A key is created once and replaced only by the rotation
// below: a lost key makes every Secret it wrote unreadable. New clusters get secretbox (XSalsa20 and
// Poly1305), which the Kubernetes docs recommend over aescbc; a cluster made with aescbc keeps it until
// its key is rotated.
import { randomBytes } from 'node:crypto';
import { parse } from 'yaml';

export type Provider = 'aescbc' | 'secretbox';
/** One key, in the order the apiserver tries them: the first one encrypts every write. */
export interface EncryptionKey {
  provider: Provider;
  name: string;
  secret: string;
}

const PROVIDERS: readonly Provider[] = ['aescbc', 'secretbox'];

export const newSecret = (): string => randomBytes(32).toString('base64');

/** The config for these keys, in order; a run of keys of one provider is one provider entry. Then identity. */
export function encryptionConfig(keys: readonly EncryptionKey[]): string {
  const lines = [
    'apiVersion: apiserver.config.k8s.io/v1',
    'kind: EncryptionConfiguration',
    'resources:',
    '  - resources:',
    '      - secrets',
    '    providers:',
  ];
  keys.forEach((k, i) => {
    if (keys[i - 1]?.provider !== k.provider)
      lines.push(`      - ${k.provider}:`, '          keys:');
    lines.push(`            - name: ${k.name}`, `              secret: ${k.secret}`);
  });
  // Secrets stored before encryption was on can still be read.
  lines.push('      - identity: {}', '');
  return lines.join('\n');
}

export function newEncryptionConfig(): string {
  return encryptionConfig([{ provider: 'secretbox', name: 'key1', secret: newSecret() }]);
}

/** The keys of a config, in the apiserver's order; undefined unless each is a 32-byte aescbc or secretbox key. */
export function encryptionKeys(text: string): EncryptionKey[] | undefined {
  try {
    const doc = parse(text) as {
      kind?: string;
      resources?: {
        providers?: Record<string, { keys?: { name?: string; secret?: string }[] }>[];
      }[];
    };
    if (doc?.kind !== 'EncryptionConfiguration') return undefined;
    const keys: EncryptionKey[] = [];
    for (const p of doc.resources?.[0]?.providers ?? []) {
      const [provider, body] = Object.entries(p)[0] ?? [];
      if (provider === 'identity') continue;
      if (!PROVIDERS.includes(provider as Provider)) return undefined;
      for (const k of body?.keys ?? []) {
        if (typeof k.name !== 'string' || typeof k.secret !== 'string') return undefined;
        if (Buffer.from(k.secret, 'base64').length !== 32) return undefined;
        keys.push({ provider: provider as Provider, name: k.name, secret: k.secret });
      }
    }
    return keys.length ? keys : undefined;
  } catch {
    return undefined;
  }
}

/** True when text is an EncryptionConfiguration with at least one aescbc or secretbox key. */
export function isUsableEncryptionConfig(text: string): boolean {
  return encryptionKeys(text) !== undefined;
}

/** What etcd holds at the start of a Secret written now: the first key's provider and name. */
export function writePrefix(keys: readonly EncryptionKey[]): string {
  return `k8s:enc:${keys[0]!.provider}:v1:${keys[0]!.name}:`;
}

/**
 * The documented rotation (kubernetes.io/docs/tasks/administer-cluster/encrypt-data/#rotating-a-decryption-key),
 * one stage per call, each a config every apiserver must run before the next: add the new key second,
 * make it first, (rewrite every Secret), drop the others. `stage` says where a config stands, so an
 * interrupted rotation goes on from there.
 */
export type RotationStage = 'idle' | 'added' | 'promoted';

export function rotationStage(keys: readonly EncryptionKey[]): RotationStage {
  if (keys.length === 1) return 'idle';
  const newest = keys.reduce((a, b) => (keyNumber(b) > keyNumber(a) ? b : a));
  return keys[0] === newest ? 'promoted' : 'added';
}

const keyNumber = (k: EncryptionKey) => Number(/^key(\d+)$/.exec(k.name)?.[1] ?? 0);

/** Stage 1: a new secretbox key, named after the highest keyN, second (it decrypts, the first still encrypts). */
export function addKey(keys: readonly EncryptionKey[], secret = newSecret()): EncryptionKey[] {
  const n = Math.max(...keys.map(keyNumber)) + 1;
  return [keys[0]!, { provider: 'secretbox', name: `key${n}`, secret }, ...keys.slice(1)];
}

/** Stage 2: the new key first (it encrypts every write from now on). */
export function promoteKey(keys: readonly EncryptionKey[]): EncryptionKey[] {
  const newest = keys.reduce((a, b) => (keyNumber(b) > keyNumber(a) ? b : a));
  return [newest, ...keys.filter((k) => k !== newest)];
}

/** Stage 4, once every Secret is rewritten: only the first key. */
export function dropOldKeys(keys: readonly EncryptionKey[]): EncryptionKey[] {
  return [keys[0]!];
}
