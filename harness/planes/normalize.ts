// Path normalisation, so that "/etc/kubernetes/pki/ca.crt" and "/var/lib/k0s/pki/ca.crt" compare
// equal and only real differences remain. Raw values are always kept next to the normalised ones.
import { parse as parseYaml } from 'yaml';
import { certFacts } from './x509.ts';
import type { PlaneCert } from './types.ts';

/** kubeadm's layout, which hardwire uses too. */
export const KUBEADM_TOKENS: [string, string][] = [
  ['/etc/kubernetes/pki/', '<pki>/'],
  ['/etc/kubernetes/manifests', '<manifests>'],
  ['/etc/kubernetes/', '<conf>/'],
  ['/var/lib/etcd', '<etcd-data>'],
];

/** Replaces each raw prefix with its token, longest prefix first. */
export function normalizeValue(value: string, tokens: [string, string][]): string {
  const sorted = [...tokens].sort((a, b) => b[0].length - a[0].length);
  let out = value;
  for (const [raw, token] of sorted) out = out.replaceAll(raw, token);
  return out;
}

/** "pki/etcd/server.crt" -> "etcd-server"; "admin.conf" -> "kubeconfig/admin". */
export function roleOf(relPath: string): string {
  if (relPath.endsWith('.conf'))
    return `kubeconfig/${relPath
      .replace(/\.conf$/, '')
      .split('/')
      .pop()}`;
  return relPath
    .replace(/^pki\//, '')
    .replace(/\.crt$/, '')
    .replaceAll('/', '-');
}

/** argv -> flag name -> value, for "--name=value" and "--name value" forms. Repeated flags are joined with ",". */
export function flagsOf(argv: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('-')) continue;
    const body = a.replace(/^-+/, '');
    let name: string;
    let value: string;
    const eq = body.indexOf('=');
    if (eq >= 0) {
      name = body.slice(0, eq);
      value = body.slice(eq + 1);
    } else if (i + 1 < argv.length && !argv[i + 1]!.startsWith('-')) {
      name = body;
      value = argv[++i]!;
    } else {
      name = body;
      value = 'true';
    }
    out.set(name, out.has(name) ? `${out.get(name)},${value}` : value);
  }
  return out;
}

/** The client cert inside a kubeconfig, and the server it points at. The key is never read out. */
/** The client certificate embedded in a kubeconfig, or `filePem`, the certificate of the file it names instead. */
export function kubeconfigCert(
  text: string,
  path: string,
  role: string,
  filePem?: string,
): PlaneCert | undefined {
  const doc = parseYaml(text) as {
    clusters?: { cluster?: { server?: string } }[];
    users?: { user?: Record<string, string> }[];
  };
  const data = doc.users?.[0]?.user?.['client-certificate-data'];
  if (!data && !filePem) return undefined;
  const pem = data ? Buffer.from(data, 'base64').toString('utf8') : filePem!;
  const server = doc.clusters?.[0]?.cluster?.server;
  return { role, path, kind: 'kubeconfig', facts: certFacts(pem), ...(server ? { server } : {}) };
}

/** Splits an ExecStart= block of a unit file into argv, with systemd's quoting and %%/$$ undone. */
export function execStartArgv(unit: string): string[] {
  const lines = unit.split('\n');
  const start = lines.findIndex((l) => l.startsWith('ExecStart='));
  if (start < 0) return [];
  let text = '';
  for (let i = start; i < lines.length; i++) {
    const line = i === start ? lines[i]!.slice('ExecStart='.length) : lines[i]!;
    if (i > start && /^\s*[#;]/.test(line)) continue; // comments inside a continued line
    const cont = /\\\s*$/.test(line);
    text += ` ${line.replace(/\\\s*$/, '')}`;
    if (!cont) break;
  }
  const words: string[] = [];
  let cur = '';
  let inWord = false;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted && ch === '\\' && text[i + 1] === '"') {
      cur += '"';
      i++;
      continue;
    }
    if (ch === '"') {
      quoted = !quoted;
      inWord = true;
      continue;
    }
    if (!quoted && /\s/.test(ch)) {
      if (inWord) words.push(cur);
      cur = '';
      inWord = false;
      continue;
    }
    cur += ch;
    inWord = true;
  }
  if (inWord) words.push(cur);
  return words.map((w) => w.replaceAll('%%', '%').replaceAll('$$', '$'));
}
