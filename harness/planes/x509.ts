// Reads the facts the certificate matrix shows from a PEM certificate: subject, SANs, key usage,
// extended key usage, validity, key algorithm and size, issuer. Works for RSA, ECDSA and Ed25519
// (node-forge's certificate parser only knows RSA, so extensions are read from the ASN.1 here).
import forge from 'node-forge';
import { X509Certificate } from 'node:crypto';

export interface CertFacts {
  subject: string;
  cn: string;
  o: string[];
  sans: string[];
  keyUsage: string[];
  extKeyUsage: string[];
  notBefore: string;
  notAfter: string;
  validityDays: number;
  keyAlgorithm: string;
  issuer: string;
  isCa: boolean;
  fingerprint256: string;
}

const KU_BITS = [
  'digitalSignature',
  'nonRepudiation',
  'keyEncipherment',
  'dataEncipherment',
  'keyAgreement',
  'keyCertSign',
  'cRLSign',
  'encipherOnly',
  'decipherOnly',
];

const EKU_NAMES: Record<string, string> = {
  '1.3.6.1.5.5.7.3.1': 'serverAuth',
  '1.3.6.1.5.5.7.3.2': 'clientAuth',
  '1.3.6.1.5.5.7.3.3': 'codeSigning',
  '1.3.6.1.5.5.7.3.4': 'emailProtection',
  '1.3.6.1.5.5.7.3.8': 'timeStamping',
  '1.3.6.1.5.5.7.3.9': 'OCSPSigning',
  '2.5.29.37.0': 'any',
};

/** Distinguished name as Node prints it ("CN=x\nO=a"), turned into "CN=x, O=a" and its parts. */
function dn(text: string): { text: string; cn: string; o: string[] } {
  const parts = text.split('\n').filter(Boolean);
  const cn = parts.find((p) => p.startsWith('CN='))?.slice(3) ?? '';
  const o = parts.filter((p) => p.startsWith('O=')).map((p) => p.slice(2));
  return { text: parts.join(', '), cn, o };
}

/** The [3] extensions of a DER certificate as OID -> value bytes (the OCTET STRING's content). */
function extensions(der: Buffer): Map<string, string> {
  const out = new Map<string, string>();
  const cert = forge.asn1.fromDer(forge.util.createBuffer(der.toString('binary')));
  const tbs = (cert.value as forge.asn1.Asn1[])[0]!;
  for (const part of tbs.value as forge.asn1.Asn1[]) {
    if (part.tagClass !== forge.asn1.Class.CONTEXT_SPECIFIC || part.type !== 3) continue;
    const seq = (part.value as forge.asn1.Asn1[])[0]!;
    for (const ext of seq.value as forge.asn1.Asn1[]) {
      const fields = ext.value as forge.asn1.Asn1[];
      const oid = forge.asn1.derToOid(fields[0]!.value as string);
      const octets = fields[fields.length - 1]!.value as string;
      out.set(oid, octets);
    }
  }
  return out;
}

function keyUsage(bytes: string | undefined): string[] {
  if (bytes === undefined) return [];
  const bits = forge.asn1.fromDer(bytes).value as string;
  // BIT STRING content: first byte = unused bits, then the bits MSB first.
  const out: string[] = [];
  for (let i = 0; i < KU_BITS.length; i++) {
    const byte = bits.charCodeAt(1 + (i >> 3));
    if (!Number.isNaN(byte) && (byte & (0x80 >> (i & 7))) !== 0) out.push(KU_BITS[i]!);
  }
  return out;
}

function keyAlgorithm(x: X509Certificate): string {
  const k = x.publicKey;
  const d = k.asymmetricKeyDetails ?? {};
  const type = (k.asymmetricKeyType ?? 'unknown').toUpperCase();
  if (d.modulusLength) return `${type}-${d.modulusLength}`;
  if (d.namedCurve) return `${type}-${d.namedCurve}`;
  return type;
}

function sans(x: X509Certificate): string[] {
  if (!x.subjectAltName) return [];
  return x.subjectAltName.split(', ').map((s) => s.replace(/^IP Address:/, 'IP:'));
}

export function certFacts(pem: string): CertFacts {
  const x = new X509Certificate(pem);
  const ext = extensions(x.raw);
  const subject = dn(x.subject);
  const notBefore = new Date(x.validFrom);
  const notAfter = new Date(x.validTo);
  return {
    subject: subject.text,
    cn: subject.cn,
    o: subject.o,
    sans: sans(x),
    keyUsage: keyUsage(ext.get('2.5.29.15')),
    extKeyUsage: (x.keyUsage ?? []).map((oid) => EKU_NAMES[oid] ?? oid),
    notBefore: notBefore.toISOString(),
    notAfter: notAfter.toISOString(),
    validityDays: Math.round(((notAfter.getTime() - notBefore.getTime()) / 86_400_000) * 100) / 100,
    keyAlgorithm: keyAlgorithm(x),
    issuer: dn(x.issuer).text,
    isCa: x.ca,
    fingerprint256: x.fingerprint256,
  };
}
