// ed25519 keys in OpenSSH's own format, from node:crypto. Not ssh2.utils.generateKeyPairSync: it strips
// leading zero bytes from the public key, so about 1 key in 256 is unreadable by sshd ("error in libcrypto",
// mscdex/ssh2#1390, #1514); a lab host with such a host key never starts sshd.
import { generateKeyPairSync, randomBytes } from 'node:crypto';

export interface SshKeyPair {
  /** `-----BEGIN OPENSSH PRIVATE KEY-----` text, unencrypted. Write it 0600. */
  private: string;
  /** `ssh-ed25519 AAAA… comment` */
  public: string;
}

function sshString(data: Buffer | string): Buffer {
  const b = typeof data === 'string' ? Buffer.from(data) : data;
  const len = Buffer.alloc(4);
  len.writeUInt32BE(b.length);
  return Buffer.concat([len, b]);
}

function uint32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

/** Encodes a raw ed25519 key (32-byte seed, 32-byte public key) as OpenSSH files (PROTOCOL.key). */
export function encodeEd25519(seed: Buffer, pub: Buffer, comment: string): SshKeyPair {
  if (seed.length !== 32 || pub.length !== 32)
    throw new Error('ed25519 seed and public key must be 32 bytes each');
  const pubBlob = Buffer.concat([sshString('ssh-ed25519'), sshString(pub)]);
  const check = randomBytes(4).readUInt32BE();
  let priv = Buffer.concat([
    uint32(check),
    uint32(check),
    sshString('ssh-ed25519'),
    sshString(pub),
    sshString(Buffer.concat([seed, pub])),
    sshString(comment),
  ]);
  const pad: number[] = [];
  for (let i = 1; (priv.length + pad.length) % 8 !== 0; i++) pad.push(i);
  priv = Buffer.concat([priv, Buffer.from(pad)]);
  const body = Buffer.concat([
    Buffer.from('openssh-key-v1\0'),
    sshString('none'),
    sshString('none'),
    sshString(''),
    uint32(1),
    sshString(pubBlob),
    sshString(priv),
  ]).toString('base64');
  const lines = body.match(/.{1,70}/g) ?? [];
  return {
    private: [
      '-----BEGIN OPENSSH PRIVATE KEY-----',
      ...lines,
      '-----END OPENSSH PRIVATE KEY-----',
      '',
    ].join('\n'),
    public: `ssh-ed25519 ${pubBlob.toString('base64')}${comment ? ` ${comment}` : ''}`,
  };
}

/** A new ed25519 key pair. */
export function generateEd25519(comment = ''): SshKeyPair {
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = privateKey.export({ format: 'jwk' });
  return encodeEd25519(Buffer.from(jwk.d!, 'base64url'), Buffer.from(jwk.x!, 'base64url'), comment);
}

/** True when a `ssh-ed25519 AAAA…` line carries a well-formed 32-byte key (ssh2-made keys may not). */
export function isWellFormedEd25519Public(line: string): boolean {
  const blob = Buffer.from(line.trim().split(/\s+/)[1] ?? '', 'base64');
  const expected = Buffer.concat([sshString('ssh-ed25519'), uint32(32)]);
  return blob.length === expected.length + 32 && blob.subarray(0, expected.length).equals(expected);
}
