// EncryptionConfiguration for Secrets at rest. The key is created once and never replaced:
// a new key would make every stored Secret unreadable.
import { randomBytes } from 'node:crypto';
import { parse } from 'yaml';

export function newEncryptionConfig(): string {
  const key = randomBytes(32).toString('base64');
  return [
    'apiVersion: apiserver.config.k8s.io/v1',
    'kind: EncryptionConfiguration',
    'resources:',
    '  - resources:',
    '      - secrets',
    '    providers:',
    '      - aescbc:',
    '          keys:',
    '            - name: key1',
    `              secret: ${key}`,
    '      - identity: {}',
    '',
  ].join('\n');
}

/** True when text is an EncryptionConfiguration with at least one aescbc or secretbox key. */
export function isUsableEncryptionConfig(text: string): boolean {
  try {
    const doc = parse(text) as {
      kind?: string;
      resources?: { providers?: Record<string, { keys?: { secret?: string }[] }>[] }[];
    };
    if (doc?.kind !== 'EncryptionConfiguration') return false;
    const first = doc.resources?.[0]?.providers?.[0];
    const p = first?.aescbc ?? first?.secretbox;
    const secret = p?.keys?.[0]?.secret;
    return typeof secret === 'string' && Buffer.from(secret, 'base64').length === 32;
  } catch {
    return false;
  }
}
