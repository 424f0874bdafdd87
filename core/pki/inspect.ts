// Reads certificates back, and says why an existing leaf no longer fits its spec.
import forge from 'node-forge';
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { isIPv6 } from 'node:net';
import { extKeyUsage } from './issue.ts';
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

export function inspect(certPem: string): CertInfo {
  const c = forge.pki.certificateFromPem(certPem);
  const x = new X509Certificate(certPem);
  const san = c.getExtension('subjectAltName') as
    | { altNames?: { type: number; value?: string; ip?: string }[] }
    | undefined;
  const eku = c.getExtension('extKeyUsage') as
    | { serverAuth?: boolean; clientAuth?: boolean }
    | undefined;
  const bc = c.getExtension('basicConstraints') as { cA?: boolean } | undefined;
  const pub = x.publicKey;
  const bits = pub.asymmetricKeyDetails?.modulusLength ?? 0;
  return {
    cn: String(c.subject.getField('CN')?.value ?? ''),
    o: c.subject.attributes.filter((a) => a.shortName === 'O').map((a) => String(a.value)),
    issuerCn: String(c.issuer.getField('CN')?.value ?? ''),
    dns: (san?.altNames ?? []).filter((a) => a.type === 2).map((a) => a.value ?? ''),
    ips: (san?.altNames ?? []).filter((a) => a.type === 7).map((a) => canonicalIp(a.ip ?? '')),
    serverAuth: eku?.serverAuth === true,
    clientAuth: eku?.clientAuth === true,
    isCa: bc?.cA === true,
    notBefore: new Date(x.validFrom),
    notAfter: new Date(x.validTo),
    keyAlgorithm: `${(pub.asymmetricKeyType ?? 'unknown').toUpperCase()}-${bits}`,
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
