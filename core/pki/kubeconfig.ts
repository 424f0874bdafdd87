// Kubeconfigs with embedded certs, byte-stable for the same inputs.
import type { KubeconfigSpec } from './table.ts';
import { APISERVER_PORT } from '../../lib/constants.ts';

export interface KubeconfigInput {
  cluster: string;
  server: string;
  caPem: string;
  certPem: string;
  keyPem: string;
  user: string;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

export function kubeconfigYaml(k: KubeconfigInput): string {
  const ctx = `${k.user}@${k.cluster}`;
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- cluster:',
    `    certificate-authority-data: ${b64(k.caPem)}`,
    `    server: ${k.server}`,
    `  name: ${k.cluster}`,
    'contexts:',
    '- context:',
    `    cluster: ${k.cluster}`,
    `    user: ${k.user}`,
    `  name: ${ctx}`,
    `current-context: ${ctx}`,
    'preferences: {}',
    'users:',
    `- name: ${k.user}`,
    '  user:',
    `    client-certificate-data: ${b64(k.certPem)}`,
    `    client-key-data: ${b64(k.keyPem)}`,
    '',
  ].join('\n');
}

export function kubeconfigServer(
  spec: KubeconfigSpec,
  endpoint: { host: string; port: number },
): string {
  return spec.server === 'local'
    ? `https://127.0.0.1:${APISERVER_PORT}`
    : `https://${endpoint.host}:${endpoint.port}`;
}
