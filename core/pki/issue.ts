// Issues keys and X.509 certificates. Keys and signatures come from Node's native crypto (fast);
// node-forge only assembles the certificate's fields, with a positive serial (Go rejects negative
// ones). forge knows only RSA keys, so the SubjectPublicKeyInfo, the issuer Name and the signature
// algorithm are put into its TBSCertificate here, from Node's DER.
import forge from 'node-forge';
import {
  X509Certificate,
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPair,
  randomBytes,
  sign,
  type KeyObject,
} from 'node:crypto';
import { promisify } from 'node:util';
import type { KeyAlgorithm } from '../inventory/schema.ts';
import type { CaSpec, LeafSpec } from './table.ts';

export type { KeyAlgorithm } from '../inventory/schema.ts';

const genKeyPair = promisify(generateKeyPair);
export const BACKDATE_MS = 5 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

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

const CURVES = { 'ECDSA-P256': 'prime256v1', 'ECDSA-P384': 'secp384r1' } as const;

/** RSA keys as PKCS#1 ("RSA PRIVATE KEY"), EC keys as SEC 1 ("EC PRIVATE KEY"), as kubeadm writes them (keyutil.MarshalPrivateKeyToPEM). */
export async function newKey(alg: KeyAlgorithm = 'RSA-2048'): Promise<KeyPair> {
  const pem = { type: 'spki', format: 'pem' } as const;
  const { publicKey, privateKey } = alg.startsWith('ECDSA-')
    ? await genKeyPair('ec', {
        namedCurve: CURVES[alg as keyof typeof CURVES],
        publicKeyEncoding: pem,
        privateKeyEncoding: { type: 'sec1', format: 'pem' },
      })
    : await genKeyPair('rsa', {
        modulusLength: Number(alg.split('-')[1]),
        publicKeyEncoding: pem,
        privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
      });
  return { keyPem: privateKey, publicPem: publicKey };
}

/** A key's algorithm in kubeadm's spelling (RSA-3072, ECDSA-P256); anything else by Node's name. */
export function keyAlgorithmOf(k: KeyObject): string {
  const d = k.asymmetricKeyDetails ?? {};
  if (k.asymmetricKeyType === 'rsa') return `RSA-${d.modulusLength ?? 0}`;
  if (k.asymmetricKeyType === 'ec') {
    const found = Object.entries(CURVES).find(([, curve]) => curve === d.namedCurve);
    return found ? found[0] : `EC-${d.namedCurve ?? 'unknown'}`;
  }
  return (k.asymmetricKeyType ?? 'unknown').toUpperCase();
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

const { asn1 } = forge;
const der = (node: forge.asn1.Asn1) => Buffer.from(asn1.toDer(node).getBytes(), 'binary');
const fromDer = (b: Buffer) => asn1.fromDer(forge.util.createBuffer(b.toString('binary')));

/** The signature algorithm Go's x509.CreateCertificate picks for the signer's key: SHA-256, or SHA-384 on P-384. */
function signatureAlgorithm(signer: KeyObject): { hash: string; id: forge.asn1.Asn1 } {
  const oid = (o: string) =>
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(o).getBytes());
  if (signer.asymmetricKeyType === 'ec') {
    const p384 = signer.asymmetricKeyDetails?.namedCurve === 'secp384r1';
    // ecdsa-with-SHA256 / -SHA384 (RFC 5758 3.2): no parameters at all.
    const id = oid(p384 ? '1.2.840.10045.4.3.3' : '1.2.840.10045.4.3.2');
    return {
      hash: p384 ? 'sha384' : 'sha256',
      id: asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [id]),
    };
  }
  const nul = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.NULL, false, '');
  return {
    hash: 'sha256',
    id: asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
      oid(forge.pki.oids.sha256WithRSAEncryption!),
      nul,
    ]),
  };
}

/** RFC 5280 4.2.1.2 method 1, as Go and forge compute it: SHA-1 of the subjectPublicKey bits. */
function keyId(spkiDer: Buffer): Buffer {
  const spki = fromDer(spkiDer).value as forge.asn1.Asn1[];
  const bits = Buffer.from(spki[1]!.value as string, 'binary');
  return createHash('sha1').update(bits.subarray(1)).digest();
}

function spkiDer(publicPem: string): Buffer {
  return createPublicKey(publicPem).export({ type: 'spki', format: 'der' });
}

/**
 * forge's TBSCertificate with the real key, issuer and algorithm put in, signed by OpenSSL: forge's
 * JavaScript RSA took ~90% of a cold wire's PKI time, and it cannot do ECDSA at all.
 */
function signCert(
  cert: forge.pki.Certificate,
  subjectKey: Buffer,
  issuerName: forge.asn1.Asn1 | undefined,
  signerPem: string,
): string {
  const signer = createPrivateKey(signerPem);
  const alg = signatureAlgorithm(signer);
  // getTBSCertificate is public in forge (lib/x509.js) but missing from @types/node-forge.
  const tbs = (
    forge.pki as unknown as { getTBSCertificate(c: forge.pki.Certificate): forge.asn1.Asn1 }
  ).getTBSCertificate(cert);
  // version, serialNumber, signature, issuer, validity, subject, subjectPublicKeyInfo, extensions
  const f = tbs.value as forge.asn1.Asn1[];
  f[2] = alg.id;
  if (issuerName) f[3] = issuerName;
  f[6] = fromDer(subjectKey);
  const tbsDer = der(tbs);
  const sig = sign(alg.hash, tbsDer, signer); // ECDSA: DER Ecdsa-Sig-Value, what X.509 wants
  const whole = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
    tbs,
    fromDer(der(alg.id)),
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.BITSTRING, false, `\0${sig.toString('binary')}`),
  ]);
  return new X509Certificate(der(whole)).toString();
}

// forge's encoder needs an RSA key object; signCert replaces its SubjectPublicKeyInfo.
const PLACEHOLDER_KEY = forge.pki.setRsaPublicKey(
  new forge.jsbn.BigInteger('3'),
  new forge.jsbn.BigInteger('3'),
);

function baseCert(subjectKey: Buffer, w: Window): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = PLACEHOLDER_KEY;
  cert.siginfo.algorithmOid = forge.pki.oids.sha256WithRSAEncryption!; // replaced in signCert
  // setExtensions() fills subjectKeyIdentifier from this; forge's own reads an RSA key only.
  const ski = keyId(subjectKey).toString('binary');
  cert.generateSubjectKeyIdentifier = () => forge.util.createBuffer(ski);
  cert.serialNumber = serial();
  cert.validity.notBefore = w.notBefore;
  cert.validity.notAfter = w.notAfter;
  return cert;
}

export async function issueCa(spec: CaSpec, w: Window, alg?: KeyAlgorithm): Promise<Signed> {
  const key = await newKey(alg);
  const cert = baseCert(spkiDer(key.publicPem), w);
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
  return {
    certPem: signCert(cert, spkiDer(key.publicPem), undefined, key.keyPem),
    keyPem: key.keyPem,
  };
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
  const caDer = new X509Certificate(ca.certPem).raw;
  const caFields = (fromDer(caDer).value as forge.asn1.Asn1[])[0]!.value as forge.asn1.Asn1[];
  const subjectKey = spkiDer(key.publicPem);
  const cert = baseCert(subjectKey, w);
  cert.setSubject(subject(spec.cn, spec.o));
  const exts: object[] = [
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', critical: true, digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', ...extKeyUsage(spec.usage) },
    { name: 'subjectKeyIdentifier' },
    {
      name: 'authorityKeyIdentifier',
      keyIdentifier: keyId(
        new X509Certificate(ca.certPem).publicKey.export({ type: 'spki', format: 'der' }),
      ).toString('binary'),
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
  // The issuer is the CA's subject Name, byte for byte (caFields[5]).
  return { certPem: signCert(cert, subjectKey, caFields[5], ca.keyPem), keyPem: key.keyPem };
}
