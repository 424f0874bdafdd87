// Issues keys and X.509 certificates. Keys and signatures come from Node's native crypto (fast);
// node-forge only assembles the certificate, always with SHA-256 and a positive serial (Go rejects
// SHA-1 signatures and negative serials).
import forge from 'node-forge';
import { generateKeyPair, randomBytes, sign } from 'node:crypto';
import { promisify } from 'node:util';
import type { CaSpec, LeafSpec } from './table.ts';

const genKeyPair = promisify(generateKeyPair);
export const BACKDATE_MS = 5 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

export type KeyAlgorithm = 'RSA-2048' | 'RSA-3072' | 'RSA-4096';

export interface KeyPair {
  keyPem: string;
  publicPem: string;
}
export interface Signed {
  certPem: string;
  keyPem: string;
}
export interface Signer {
  certPem: string;
  keyPem: string;
}

export async function newKey(alg: KeyAlgorithm = 'RSA-2048'): Promise<KeyPair> {
  const bits = Number(alg.split('-')[1]);
  const { publicKey, privateKey } = await genKeyPair('rsa', {
    modulusLength: bits,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  return { keyPem: privateKey, publicPem: publicKey };
}

/** 16 random bytes, top bit clear: a positive DER INTEGER. */
function serial(): string {
  const b = randomBytes(16);
  b[0] = (b[0]! & 0x7f) | 0x01;
  return b.toString('hex');
}

function subject(cn: string, o: readonly string[]): forge.pki.CertificateField[] {
  return [...o.map((value) => ({ shortName: 'O', value })), { shortName: 'CN', value: cn }];
}

export interface Window {
  notBefore: Date;
  notAfter: Date;
}

export function windowFor(days: number, now = Date.now()): Window {
  return { notBefore: new Date(now - BACKDATE_MS), notAfter: new Date(now + days * DAY_MS) };
}

/**
 * What forge's cert.sign() does, with the RSA signature made by OpenSSL instead of forge's JavaScript
 * big integers: those took ~90% of a cold wire's PKI time (about 50 ms a certificate).
 */
function signCert(cert: forge.pki.Certificate, keyPem: string): void {
  cert.signatureOid = forge.pki.oids.sha256WithRSAEncryption!;
  cert.siginfo.algorithmOid = forge.pki.oids.sha256WithRSAEncryption!;
  // getTBSCertificate is public in forge (lib/x509.js) but missing from @types/node-forge.
  cert.tbsCertificate = (
    forge.pki as unknown as { getTBSCertificate(c: forge.pki.Certificate): forge.asn1.Asn1 }
  ).getTBSCertificate(cert);
  const tbs = Buffer.from(forge.asn1.toDer(cert.tbsCertificate).getBytes(), 'binary');
  cert.signature = sign('sha256', tbs, keyPem).toString('binary');
}

function baseCert(publicPem: string, w: Window): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicPem);
  cert.serialNumber = serial();
  cert.validity.notBefore = w.notBefore;
  cert.validity.notAfter = w.notAfter;
  return cert;
}

export async function issueCa(spec: CaSpec, w: Window, alg?: KeyAlgorithm): Promise<Signed> {
  const key = await newKey(alg);
  const cert = baseCert(key.publicPem, w);
  const attrs = subject(spec.cn, []);
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    {
      name: 'keyUsage',
      critical: true,
      digitalSignature: true,
      keyEncipherment: true,
      keyCertSign: true,
    },
    { name: 'subjectKeyIdentifier' },
  ]);
  signCert(cert, key.keyPem);
  return { certPem: forge.pki.certificateToPem(cert), keyPem: key.keyPem };
}

export function extKeyUsage(usage: LeafSpec['usage']): {
  serverAuth: boolean;
  clientAuth: boolean;
} {
  return { serverAuth: usage !== 'client', clientAuth: usage !== 'server' };
}

/** Signs a leaf for spec. Pass `key` to keep an existing key (renewal keeps the key pair). */
export async function issueLeaf(
  spec: LeafSpec,
  ca: Signer,
  w: Window,
  opts: { key?: KeyPair; alg?: KeyAlgorithm } = {},
): Promise<Signed> {
  const key = opts.key ?? (await newKey(opts.alg));
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const cert = baseCert(key.publicPem, w);
  cert.setSubject(subject(spec.cn, spec.o));
  cert.setIssuer(caCert.subject.attributes);
  const exts: object[] = [
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', critical: true, digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', ...extKeyUsage(spec.usage) },
    { name: 'subjectKeyIdentifier' },
    {
      name: 'authorityKeyIdentifier',
      keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes(),
    },
  ];
  if (spec.dns.length + spec.ips.length > 0) {
    exts.push({
      name: 'subjectAltName',
      altNames: [
        ...spec.dns.map((value) => ({ type: 2, value })),
        ...spec.ips.map((ip) => ({ type: 7, ip })),
      ],
    });
  }
  cert.setExtensions(exts);
  signCert(cert, ca.keyPem);
  return { certPem: forge.pki.certificateToPem(cert), keyPem: key.keyPem };
}
