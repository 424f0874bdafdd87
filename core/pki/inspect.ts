// Reads certificates back, and says why an existing leaf no longer fits its spec.
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { isIPv6 } from 'node:net';
import { extKeyUsage, keyAlgorithmOf } from './issue.ts';
import type { LeafSpec } from './table.ts';

export interface CertInfo {
  cn: string;
  o: string[];
  issuerCn: string;
  dns: string[];
  ips: string[];
  serverAuth: boolean;
  clientAuth: boolean;
  isCa: boolean;
  notBefore: Date;
  notAfter: Date;
  keyAlgorithm: string;
  /** SHA-256 fingerprint, colon-separated hex, as openssl prints it. */
  fingerprint: string;
}

function canonicalIp(ip: string): string {
  return isIPv6(ip) ? new URL(`http://[${ip}]/`).hostname.slice(1, -1) : ip;
}

/** Node's one-line-per-attribute Name ("O=a\nCN=b"): the values of key. */
function nameValues(name: string, key: string): string[] {
  return name
    .split('\n')
    .filter((l) => l.startsWith(`${key}=`))
    .map((l) => l.slice(key.length + 1));
}

/** Node's subjectAltName text: "DNS:a, IP Address:1.2.3.4"; a value with a comma comes JSON-quoted. */
function sans(x: X509Certificate, prefix: string): string[] {
  const parts = (x.subjectAltName ?? '').match(/(?:[^,"]|"(?:\\.|[^"\\])*")+/g) ?? [];
  return parts
    .map((p) => p.trim())
    .filter((p) => p.startsWith(prefix))
    .map((p) => p.slice(prefix.length))
    .map((v) => (v.startsWith('"') ? (JSON.parse(v) as string) : v));
}

// Node's X509Certificate, not forge: forge parses RSA certificates only.
export function inspect(certPem: string): CertInfo {
  const x = new X509Certificate(certPem);
  const eku = x.keyUsage ?? [];
  return {
    cn: nameValues(x.subject, 'CN')[0] ?? '',
    o: nameValues(x.subject, 'O'),
    issuerCn: nameValues(x.issuer, 'CN')[0] ?? '',
    dns: sans(x, 'DNS:'),
    ips: sans(x, 'IP Address:').map(canonicalIp),
    serverAuth: eku.includes('1.3.6.1.5.5.7.3.1'),
    clientAuth: eku.includes('1.3.6.1.5.5.7.3.2'),
    isCa: x.ca,
    notBefore: new Date(x.validFrom),
    notAfter: new Date(x.validTo),
    keyAlgorithm: keyAlgorithmOf(x.publicKey),
    fingerprint: x.fingerprint256,
  };
}

function sameSet(a: string[], b: string[]): boolean {
  const sa = new Set(a);
  return sa.size === new Set(b).size && b.every((x) => sa.has(x));
}

/** Reasons an existing leaf must be reissued for spec; empty means keep it. */
export function leafMismatch(
  spec: LeafSpec,
  certPem: string,
  keyPem: string,
  caCertPem: string,
  keyAlgorithm: string,
  now = Date.now(),
  minRemainingMs = 30 * 24 * 3600 * 1000,
): string[] {
  const reasons: string[] = [];
  let info: CertInfo;
  try {
    info = inspect(certPem);
  } catch {
    return ['the certificate does not parse'];
  }
  const x = new X509Certificate(certPem);
  const ca = new X509Certificate(caCertPem);
  if (!x.checkIssued(ca) || !x.verify(ca.publicKey))
    reasons.push('it is not signed by the current CA');
  try {
    const pub = createPublicKey(createPrivateKey(keyPem)).export({ type: 'spki', format: 'der' });
    if (!pub.equals(x.publicKey.export({ type: 'spki', format: 'der' })))
      reasons.push('the key file does not match the certificate');
  } catch {
    reasons.push('the key file does not parse');
  }
  if (info.keyAlgorithm !== keyAlgorithm)
    reasons.push(`its key is ${info.keyAlgorithm}, cluster.keyAlgorithm is ${keyAlgorithm}`);
  if (info.cn !== spec.cn) reasons.push(`CN is "${info.cn}", want "${spec.cn}"`);
  if (!sameSet(info.o, spec.o))
    reasons.push(`O is [${info.o.join(', ')}], want [${spec.o.join(', ')}]`);
  const wantIps = spec.ips.map(canonicalIp);
  if (!sameSet(info.dns, spec.dns))
    reasons.push(
      `DNS SANs differ (missing: ${spec.dns.filter((d) => !info.dns.includes(d)).join(', ') || '-'}; extra: ${info.dns.filter((d) => !spec.dns.includes(d)).join(', ') || '-'})`,
    );
  if (!sameSet(info.ips, wantIps))
    reasons.push(
      `IP SANs differ (missing: ${wantIps.filter((d) => !info.ips.includes(d)).join(', ') || '-'}; extra: ${info.ips.filter((d) => !wantIps.includes(d)).join(', ') || '-'})`,
    );
  const eku = extKeyUsage(spec.usage);
  if (info.serverAuth !== eku.serverAuth || info.clientAuth !== eku.clientAuth)
    reasons.push('extended key usage differs');
  if (info.notAfter.getTime() - now < minRemainingMs)
    reasons.push(`it expires ${info.notAfter.toISOString()}, within 30 days`);
  if (info.notBefore.getTime() > now) reasons.push('it is not valid yet');
  return reasons;
}
