// known_hosts parsing and host-key pinning, in the OpenSSH file format (plain and hashed entries).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  realpathSync,
} from 'node:fs';
import { basename, dirname, isAbsolute, join, relative } from 'node:path';

export interface KnownHostEntry {
  /** 1-based line number in the file, for messages that point at the entry. */
  line: number;
  marker: '' | '@revoked' | '@cert-authority';
  /** Comma-separated patterns, or one `|1|salt|hash` hashed name. */
  hosts: string;
  keyType: string;
  /** Raw key blob (base64-decoded), as the server sends it. */
  key: Buffer;
}

export type HostKeyCheck =
  | { status: 'match'; entry: KnownHostEntry }
  | { status: 'unknown' }
  | { status: 'changed'; entry: KnownHostEntry }
  | { status: 'revoked'; entry: KnownHostEntry };

/** The name a host is looked up under: `host` on port 22, `[host]:port` otherwise. */
export function knownHostName(host: string, port = 22): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

/** Parses known_hosts text. Malformed lines are skipped, as OpenSSH does. */
export function parseKnownHosts(text: string): KnownHostEntry[] {
  const entries: KnownHostEntry[] = [];
  text.split('\n').forEach((raw, i) => {
    const lineText = raw.trim();
    if (lineText === '' || lineText.startsWith('#')) return;
    const fields = lineText.split(/\s+/);
    let marker: KnownHostEntry['marker'] = '';
    if (fields[0] === '@revoked' || fields[0] === '@cert-authority')
      marker = fields.shift() as KnownHostEntry['marker'];
    else if (fields[0]?.startsWith('@')) return; // unknown marker
    const [hosts, keyType, b64] = fields;
    if (!hosts || !keyType || !b64 || !/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return;
    const key = Buffer.from(b64, 'base64');
    if (!blobHasType(key, keyType)) return;
    entries.push({ line: i + 1, marker, hosts, keyType, key });
  });
  return entries;
}

/** A key blob starts with its own type name as an SSH string; a mismatch means a corrupt line. */
function blobHasType(blob: Buffer, keyType: string): boolean {
  if (blob.length < 4) return false;
  const n = blob.readUInt32BE(0);
  return n + 4 <= blob.length && blob.subarray(4, 4 + n).toString('latin1') === keyType;
}

/** The key type named inside a raw key blob (e.g. "ssh-ed25519"). */
export function keyTypeOfBlob(blob: Buffer): string {
  if (blob.length < 4) return '';
  const n = blob.readUInt32BE(0);
  return n + 4 <= blob.length ? blob.subarray(4, 4 + n).toString('latin1') : '';
}

/** OpenSSH glob: `*` and `?` only, case-insensitive. */
function globMatch(pattern: string, name: string): boolean {
  const re = new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replaceAll('*', '.*')
      .replaceAll('?', '.')}$`,
    'i',
  );
  return re.test(name);
}

/** Does the entry's host field name `name` (already in `[host]:port` form when needed)? */
export function entryMatchesHost(hosts: string, name: string): boolean {
  if (hosts.startsWith('|1|')) {
    const [, , salt, hash] = hosts.split('|');
    if (!salt || !hash) return false;
    const want = Buffer.from(hash, 'base64');
    const got = createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest();
    return want.length === got.length && timingSafeEqual(want, got);
  }
  let matched = false;
  for (const pat of hosts.split(',')) {
    if (pat.startsWith('!')) {
      if (globMatch(pat.slice(1), name)) return false; // a negated match wins over everything
    } else if (globMatch(pat, name)) {
      matched = true;
    }
  }
  return matched;
}

/**
 * Checks a presented key against the entries for `name`. Any entry for the host that does not match
 * counts as a changed key, including one of another key type: pinning must not be downgraded.
 */
export function checkHostKey(entries: KnownHostEntry[], name: string, key: Buffer): HostKeyCheck {
  const forHost = entries.filter(
    (e) => e.marker !== '@cert-authority' && entryMatchesHost(e.hosts, name),
  );
  const revoked = forHost.find((e) => e.marker === '@revoked' && e.key.equals(key));
  if (revoked) return { status: 'revoked', entry: revoked };
  const pinned = forHost.filter((e) => e.marker === '');
  const match = pinned.find((e) => e.key.equals(key));
  if (match) return { status: 'match', entry: match };
  if (pinned.length === 0) return { status: 'unknown' };
  const type = keyTypeOfBlob(key);
  return { status: 'changed', entry: pinned.find((e) => e.keyType === type) ?? pinned[0]! };
}

/** Key types pinned for `name`, so the client can ask the server for exactly those first. */
export function pinnedKeyTypes(entries: KnownHostEntry[], name: string): string[] {
  return [
    ...new Set(
      entries
        .filter((e) => e.marker === '' && entryMatchesHost(e.hosts, name))
        .map((e) => e.keyType),
    ),
  ];
}

/** One known_hosts line, hashed (like `ssh-keyscan -H`) or plain. */
export function formatKnownHost(
  names: string[],
  key: Buffer,
  opts: { hash?: boolean } = {},
): string {
  const type = keyTypeOfBlob(key);
  if (!type) throw new Error('formatKnownHost: not an SSH public key blob');
  const hostField = opts.hash
    ? names.map((n) => {
        const salt = randomBytes(20);
        return `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update(n).digest('base64')}`;
      })
    : [names.join(',')];
  return hostField.map((h) => `${h} ${type} ${key.toString('base64')}`).join('\n');
}

export function readKnownHostsFile(file: string): KnownHostEntry[] {
  return existsSync(file) ? parseKnownHosts(readFileSync(file, 'utf8')) : [];
}

/** Whether `dir` is `root` or below it, both with symlinks resolved. */
function inside(dir: string, root: string): boolean {
  if (!existsSync(root)) return false;
  const rel = relative(realpathSync(root), dir);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * A knownHosts file hardwire may append new host keys to (--accept-new-host-keys), or undefined: the
 * reason it may not. It must not be a symlink, and an existing file must be all known_hosts lines;
 * one that would be created, or holds no key yet, must sit under one of `roots` (the state dir, the
 * inventory's directory, ~/.ssh). Otherwise an inventory could have any file the user can write
 * grow a line.
 */
export function knownHostsProblem(file: string, roots: string[]): string | undefined {
  const st = existsSync(file) || isSymlink(file) ? lstatSync(file) : undefined;
  if (st?.isSymbolicLink()) return `${file} is a symlink; name the known_hosts file itself`;
  if (st && !st.isFile()) return `${file} is not a regular file`;
  let keys = 0;
  if (st) {
    const lines = readFileSync(file, 'utf8').split('\n');
    const entries = new Set(parseKnownHosts(lines.join('\n')).map((e) => e.line));
    const bad = lines.findIndex(
      (l, i) => l.trim() !== '' && !l.trim().startsWith('#') && !entries.has(i + 1),
    );
    if (bad >= 0)
      return `${file}:${bad + 1} is not a known_hosts line; hardwire appends host keys only to a known_hosts file`;
    keys = entries.size;
  }
  if (keys === 0 && !roots.some((r) => inside(realDir(dirname(file)), r)))
    return `${file} ${st ? 'holds no host key' : 'does not exist'}, and hardwire creates a known_hosts file only under the state dir, the inventory's directory or ~/.ssh; move it there`;
  return undefined;
}

/** A directory with symlinks resolved, through its nearest existing ancestor when it is not there yet. */
function realDir(dir: string): string {
  if (existsSync(dir)) return realpathSync(dir);
  const up = dirname(dir);
  return up === dir ? dir : join(realDir(up), basename(dir));
}

function isSymlink(file: string): boolean {
  try {
    return lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Appends entries, making sure the previous last line was terminated. */
export function appendKnownHost(file: string, line: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const prev = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const sep = prev === '' || prev.endsWith('\n') ? '' : '\n';
  appendFileSync(file, `${sep}${line}\n`, { mode: 0o600 });
}
