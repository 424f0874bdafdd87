// The SSH transport every host-touching capability uses: pinned host keys, argv-only remote commands,
// atomic file writes. One Session is one authenticated connection (through optional jump hosts).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Client, type ClientChannel, type ConnectConfig } from 'ssh2';
import type { HostDoc } from '../inventory/schema.ts';
import { InputError, StepError } from '../lib/errors.ts';
import { expandHome } from '../lib/paths.ts';
import {
  appendKnownHost, checkHostKey, formatKnownHost, keyTypeOfBlob, knownHostName, pinnedKeyTypes, readKnownHostsFile,
  type HostKeyCheck,
} from './known-hosts.ts';
import { shJoin, shQuote } from './quote.ts';
import { BATCH_SCRIPT, batchArgs, tarOf, type BatchFile } from './batch.ts';

/** What the transport needs of an inventory host (an inventory `Host` fits). */
export type SshTarget = Pick<HostDoc, 'name' | 'address' | 'ssh'>;

export interface ConnectOptions {
  /** Pinned host keys; defaults to ~/.ssh/known_hosts like OpenSSH. */
  knownHostsFile?: string;
  /** Trust and record a key for a host that has none yet. A changed key is refused regardless. */
  acceptNewHostKeys?: boolean;
  /** Time for TCP connect + handshake + auth, per hop. Default 10 s. */
  timeoutMs?: number;
}

export interface ExecOptions {
  /** Bytes, or a function that makes a stream (called once the command has started). */
  stdin?: Buffer | string | (() => NodeJS.ReadableStream);
  timeoutMs?: number;
  /** Return non-zero exits instead of throwing. */
  allowFail?: boolean;
}

export interface ExecResult {
  /** Exit status; -1 when the remote process died from a signal. */
  code: number;
  signal?: string;
  stdout: string;
  stderr: string;
}

export interface WriteOptions {
  /** File mode, e.g. 0o600. Applied before the rename, so the file is never visible with a wider mode. */
  mode: number;
  /** chown argument such as "root:root" or "etcd". */
  owner?: string;
}

export interface Session {
  readonly host: SshTarget;
  exec(argv: string[], opts?: ExecOptions): Promise<ExecResult>;
  readFile(path: string): Promise<Buffer>;
  writeFileAtomic(path: string, data: Buffer | string, opts: WriteOptions): Promise<void>;
  /** Many files in one exec and one tar stream, each atomically (transport/batch.ts). */
  writeFilesAtomic(files: BatchFile[]): Promise<void>;
  /** SHA-256 hex of a regular file, or null when it does not exist. */
  sha256(path: string): Promise<string | null>;
  /** Batched sha256 in one round trip; missing files map to null. */
  sha256Many(paths: string[]): Promise<Map<string, string | null>>;
  /** A TCP stream to 127.0.0.1:port on the host, tunnelled through this SSH connection (for loopback-only ports). */
  openLocalPort(port: number): Promise<ClientChannel>;
  close(): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 10_000;
/** sshd's MaxSessions defaults to 10 channels per connection; stay under it. */
const MAX_CHANNELS = 6;

export function fingerprint(keyBlob: Buffer): string {
  return `SHA256:${createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '')}`;
}

interface Hop { user: string; address: string; port: number }

/** Parses `[user@]host[:port]` hops, comma separated like OpenSSH's ProxyJump. */
export function parseProxyJump(spec: string, defaultUser: string): Hop[] {
  if (spec.trim() === '') return [];
  return spec.split(',').map((part) => {
    const m = /^(?:([^@\s]+)@)?(\[[^\]]+\]|[^:@\s]+)(?::(\d{1,5}))?$/.exec(part.trim());
    const port = m?.[3] === undefined ? 22 : Number(m[3]);
    if (!m || port < 1 || port > 65535) throw new InputError('ssh.proxyJump', `"${part}" is not [user@]host[:port]`);
    return { user: m[1] ?? defaultUser, address: m[2]!.replace(/^\[|\]$/g, ''), port };
  });
}

function loadPrivateKey(target: SshTarget, hasAgent: boolean): Buffer | undefined {
  const file = expandHome(target.ssh.identityFile);
  if (!existsSync(file)) {
    if (hasAgent) return undefined;
    throw new InputError('ssh.identityFile', `${file} (host ${target.name}) does not exist and SSH_AUTH_SOCK is not set; point identityFile at a private key`);
  }
  return readFileSync(file);
}

/** Connects one hop. `sock` is the forwarded stream from the previous hop, if any. */
function connectHop(
  hop: Hop, hostName: string, key: Buffer | undefined, identityFile: string, opts: ConnectOptions, knownHostsFile: string, sock?: ClientChannel,
): Promise<Client> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const name = knownHostName(hop.address, hop.port);
  const entries = readKnownHostsFile(knownHostsFile);
  let verdict: { check: HostKeyCheck; key: Buffer } | undefined;
  const where = `${hop.address}:${hop.port}`;

  const pinned = pinnedKeyTypes(entries, name);
  const defaults = ['ssh-ed25519', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', 'rsa-sha2-512', 'rsa-sha2-256'];
  // Ask for the pinned key types first, so a host with several keys presents the one we know.
  const pinnedAlgos = pinned.flatMap((t) => (t === 'ssh-rsa' ? ['rsa-sha2-512', 'rsa-sha2-256'] : [t])).filter((t) => defaults.includes(t));
  const serverHostKey = [...new Set([...pinnedAlgos, ...defaults])];

  const config: ConnectConfig = {
    host: hop.address,
    port: hop.port,
    username: hop.user,
    readyTimeout: timeoutMs,
    keepaliveInterval: 5000,
    keepaliveCountMax: 3,
    algorithms: { serverHostKey: serverHostKey as NonNullable<ConnectConfig['algorithms']>['serverHostKey'] },
    hostVerifier: (blob: Buffer) => {
      const check = checkHostKey(entries, name, blob);
      verdict = { check, key: blob };
      if (check.status === 'match') return true;
      if (check.status === 'unknown' && opts.acceptNewHostKeys) {
        appendKnownHost(knownHostsFile, formatKnownHost([name], blob));
        return true;
      }
      return false;
    },
    ...(key ? { privateKey: key } : {}),
    ...(process.env.SSH_AUTH_SOCK ? { agent: process.env.SSH_AUTH_SOCK } : {}),
    ...(sock ? { sock } : {}),
  };

  return new Promise((resolve, reject) => {
    const client = new Client();
    client.setMaxListeners(4 * MAX_CHANNELS); // one 'close' listener per in-flight exec
    let settled = false;
    const fail = (err: StepError) => {
      if (settled) return;
      settled = true;
      client.end();
      reject(err);
    };
    client.once('ready', () => {
      settled = true;
      resolve(client);
    });
    client.on('error', (err: Error & { level?: string; code?: string }) => {
      if (verdict && verdict.check.status !== 'match' && !(verdict.check.status === 'unknown' && opts.acceptNewHostKeys)) {
        return fail(hostKeyError(verdict.check, verdict.key, hostName, where, knownHostsFile));
      }
      if (err.level === 'client-timeout') {
        return fail(new StepError('ssh-connect-timeout', `no SSH handshake from ${where} within ${timeoutMs} ms; is the host up and its network reachable?`, { host: hostName, cause: err }));
      }
      if (err.level === 'client-authentication') {
        const tried = [key ? `key ${identityFile}` : '', process.env.SSH_AUTH_SOCK ? 'agent' : ''].filter(Boolean);
        return fail(new StepError('ssh-auth', `authentication as ${hop.user}@${where} failed (tried: ${tried.join(', ') || 'nothing'}); is the public key in ~${hop.user}/.ssh/authorized_keys?`, { host: hostName, cause: err }));
      }
      const code = err.code ? ` (${err.code})` : '';
      fail(new StepError('ssh-connect', `cannot connect to ${where}${code}: ${err.message}`, { host: hostName, cause: err }));
    });
    client.on('close', () => fail(new StepError('ssh-connect', `connection to ${where} closed during the handshake`, { host: hostName })));
    client.connect(config);
  });
}

function hostKeyError(check: HostKeyCheck, key: Buffer, hostName: string, where: string, file: string): StepError {
  const fp = `${keyTypeOfBlob(key)} ${fingerprint(key)}`;
  if (check.status === 'changed') {
    return new StepError('ssh-host-key-changed', `host key for ${where} has CHANGED: the server presented ${fp}, but ${file}:${check.entry.line} pins ${check.entry.keyType} ${fingerprint(check.entry.key)}. Refusing to connect; if the host was really reinstalled, remove that line.`, { host: hostName });
  }
  if (check.status === 'revoked') {
    return new StepError('ssh-host-key-revoked', `host key ${fp} of ${where} is marked @revoked in ${file}:${check.entry.line}; refusing to connect`, { host: hostName });
  }
  return new StepError('ssh-host-key-unknown', `host key ${fp} of ${where} is not in ${file}; verify it out of band and add it (or allow accepting new keys)`, { host: hostName });
}

function forward(client: Client, address: string, port: number, hostName: string, step = 'ssh-proxy-jump', who = 'jump host'): Promise<ClientChannel> {
  return new Promise((resolve, reject) => {
    client.forwardOut('127.0.0.1', 0, address, port, (err, stream) => {
      if (err) reject(new StepError(step, `${who} could not open a channel to ${address}:${port}: ${err.message}`, { host: hostName, cause: err }));
      else resolve(stream);
    });
  });
}

/** Opens an authenticated, host-key-pinned session to an inventory host. */
export async function connect(target: SshTarget, opts: ConnectOptions = {}): Promise<Session> {
  const knownHostsFile = opts.knownHostsFile ?? join(homedir(), '.ssh', 'known_hosts');
  const key = loadPrivateKey(target, Boolean(process.env.SSH_AUTH_SOCK));
  const hops = [...parseProxyJump(target.ssh.proxyJump, target.ssh.user), { user: target.ssh.user, address: target.address, port: target.ssh.port }];
  const clients: Client[] = [];
  try {
    let sock: ClientChannel | undefined;
    for (const [i, hop] of hops.entries()) {
      if (i > 0) sock = await forward(clients[i - 1]!, hop.address, hop.port, target.name);
      clients.push(await connectHop(hop, target.name, key, expandHome(target.ssh.identityFile), opts, knownHostsFile, sock));
    }
  } catch (err) {
    for (const c of clients.reverse()) c.end();
    throw err;
  }
  return new SshSession(target, clients);
}

// Writes stdin to a temp file beside the target, fixes mode/owner, fsyncs, then renames over it.
// A client that dies mid-transfer closes stdin, which cat takes for the end: the byte count ($4)
// keeps a truncated file from being renamed over the target.
const WRITE_SCRIPT = [
  'set -e',
  'dir=$(dirname -- "$1")',
  'mkdir -p -- "$dir"',
  'tmp=$(mktemp "$dir/.hardwire.XXXXXX")',
  'trap \'rm -f -- "$tmp"\' EXIT',
  'cat > "$tmp"',
  'got=$(wc -c < "$tmp")',
  'if [ "$got" -ne "$4" ]; then echo "short write: $got of $4 bytes" >&2; exit 1; fi',
  'chmod "$2" "$tmp"',
  'if [ -n "$3" ]; then chown -- "$3" "$tmp"; fi',
  'sync -- "$tmp" 2>/dev/null || true',
  'mv -f -- "$tmp" "$1"',
  'trap - EXIT',
].join('\n');

// Prints one line per argument, in order: the hex digest, or "-" for a missing/non-regular file.
const HASH_SCRIPT = 'for f do if [ -f "$f" ]; then sha256sum < "$f" | cut -d" " -f1; else echo -; fi; done';

interface RawResult { code: number; signal?: string; stdout: Buffer; stderr: Buffer }

class SshSession implements Session {
  readonly host: SshTarget;
  #clients: Client[];
  #client: Client;
  #active = 0;
  #waiting: (() => void)[] = [];
  #lost: StepError | undefined;
  #closed: boolean[] = [];

  constructor(host: SshTarget, clients: Client[]) {
    this.host = host;
    this.#client = clients[clients.length - 1]!;
    const onLost = () => {
      this.#lost ??= new StepError('ssh-connection-lost', `connection to ${host.address} was lost`, { host: host.name });
    };
    this.#client.on('close', onLost);
    this.#client.on('error', onLost);
    this.#clients = [...clients].reverse(); // close the target first, then the jump hosts
    this.#closed = this.#clients.map(() => false);
    this.#clients.forEach((c, i) => c.once('close', () => { this.#closed[i] = true; }));
  }

  /** A channel slot; a released slot passes straight to the next waiter so the cap is never exceeded. */
  async #slot(): Promise<() => void> {
    if (this.#active < MAX_CHANNELS) this.#active++;
    else await new Promise<void>((r) => this.#waiting.push(r));
    return () => {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#active--;
    };
  }

  async #run(argv: string[], opts: ExecOptions): Promise<RawResult> {
    const full = this.host.ssh.become === 'sudo' ? ['sudo', '-n', '--', ...argv] : argv;
    const cmd = shJoin(full);
    const release = await this.#slot();
    try {
      // sshd frees a session slot only after it has reaped the command, a moment after the channel closed on
      // our side, so under load a channel open can be refused: retry briefly.
      for (let attempt = 0; ; attempt++) {
        if (this.#lost) throw this.#lost;
        const r = await this.#runOnce(cmd, argv, opts, attempt < 40);
        if (r !== 'refused') return r;
        await new Promise((res) => setTimeout(res, Math.min(25 * (attempt + 1), 250)));
      }
    } finally {
      release();
    }
  }

  #runOnce(cmd: string, argv: string[], opts: ExecOptions, mayRetry: boolean): Promise<RawResult | 'refused'> {
    return new Promise((resolve, reject) => {
      this.#client.exec(cmd, (err, stream) => {
        if (err) {
          if (mayRetry && /open failed|Channel open failure/i.test(err.message)) return resolve('refused');
          return reject(new StepError('ssh-exec', `cannot start ${display(argv)}: ${err.message}`, { host: this.host.name, cause: err }));
        }
        // Listeners go on synchronously: exit status and close can arrive in the same packet batch as the reply.
        const out: Buffer[] = [];
        const errOut: Buffer[] = [];
        let code = -1;
        let signal: string | undefined;
        let timer: NodeJS.Timeout | undefined;
        const onLost = () => reject(this.#lost ?? new StepError('ssh-connection-lost', `connection lost while running ${display(argv)}`, { host: this.host.name }));
        this.#client.once('close', onLost);
        if (opts.timeoutMs) {
          timer = setTimeout(() => {
            stream.close();
            reject(new StepError('ssh-exec-timeout', `${display(argv)} did not finish within ${opts.timeoutMs} ms`, { host: this.host.name, detail: tail(errOut) }));
          }, opts.timeoutMs);
        }
        stream.on('data', (d: Buffer) => out.push(d));
        stream.stderr.on('data', (d: Buffer) => errOut.push(d));
        stream.on('exit', (c: number | null, sig?: string) => {
          if (typeof c === 'number') code = c;
          if (sig) signal = sig;
        });
        stream.on('close', () => {
          clearTimeout(timer);
          this.#client.off('close', onLost);
          resolve({ code, ...(signal ? { signal } : {}), stdout: Buffer.concat(out), stderr: Buffer.concat(errOut) });
        });
        if (typeof opts.stdin === 'function') {
          const src = opts.stdin();
          src.on('error', (e: Error) => { stream.close(); reject(new StepError('ssh-exec', `stdin of ${display(argv)}: ${e.message}`, { host: this.host.name, cause: e })); });
          src.pipe(stream);
        } else {
          stream.end(opts.stdin ?? undefined);
        }
      });
    });
  }

  async #checked(argv: string[], opts: ExecOptions, step: string) {
    const r = await this.#run(argv, opts);
    if (r.code !== 0 && !opts.allowFail) {
      const how = r.signal ? `killed by ${r.signal}` : `exit ${r.code}`;
      throw new StepError(step, `${display(argv)} failed (${how})`, { host: this.host.name, detail: tail([r.stderr]) });
    }
    return r;
  }

  async exec(argv: string[], opts: ExecOptions = {}): Promise<ExecResult> {
    const r = await this.#checked(argv, opts, 'remote-exec');
    return { code: r.code, ...(r.signal ? { signal: r.signal } : {}), stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8') };
  }

  async readFile(path: string): Promise<Buffer> {
    return (await this.#checked(['cat', '--', path], {}, 'remote-read')).stdout;
  }

  async writeFilesAtomic(files: BatchFile[]): Promise<void> {
    if (files.length === 0) return;
    for (const f of files) {
      if (!Number.isInteger(f.mode) || f.mode < 0 || f.mode > 0o7777) throw new InputError('mode', `${f.mode} is not a file mode; use e.g. 0o644`);
      if (!f.path.startsWith('/')) throw new InputError('path', `"${f.path}" must be absolute`);
    }
    await this.#checked(['sh', '-c', BATCH_SCRIPT, 'sh', ...batchArgs(files)], { stdin: () => tarOf(files), timeoutMs: 600_000 }, 'remote-write');
  }

  async writeFileAtomic(path: string, data: Buffer | string, opts: WriteOptions): Promise<void> {
    if (!Number.isInteger(opts.mode) || opts.mode < 0 || opts.mode > 0o7777) throw new InputError('mode', `${opts.mode} is not a file mode; use e.g. 0o644`);
    if (!path.startsWith('/')) throw new InputError('path', `"${path}" must be absolute`);
    await this.#checked(['sh', '-c', WRITE_SCRIPT, 'sh', path, opts.mode.toString(8), opts.owner ?? '', String(Buffer.byteLength(data))], { stdin: data }, 'remote-write');
  }

  async sha256(path: string): Promise<string | null> {
    return (await this.sha256Many([path])).get(path) ?? null;
  }

  async sha256Many(paths: string[]): Promise<Map<string, string | null>> {
    const result = new Map<string, string | null>();
    if (paths.length === 0) return result;
    const r = await this.#checked(['sh', '-c', HASH_SCRIPT, 'sh', ...paths], {}, 'remote-hash');
    const lines = r.stdout.toString('utf8').split('\n');
    paths.forEach((p, i) => {
      const l = lines[i] ?? '';
      result.set(p, /^[0-9a-f]{64}$/.test(l) ? l : null);
    });
    return result;
  }

  async openLocalPort(port: number): Promise<ClientChannel> {
    if (this.#lost) throw this.#lost;
    const release = await this.#slot();
    try {
      const stream = await forward(this.#client, '127.0.0.1', port, this.host.name, 'ssh-forward', 'the host');
      stream.once('close', release);
      return stream;
    } catch (err) {
      release();
      throw err;
    }
  }

  async close(): Promise<void> {
    for (const [i, c] of [...this.#clients].entries()) {
      if (this.#closed[i]) continue;
      await new Promise<void>((resolve) => {
        // A dead peer never answers the disconnect: give it a moment, then drop the socket.
        const timer = setTimeout(() => { c.destroy(); resolve(); }, 1000);
        c.once('close', () => { clearTimeout(timer); resolve(); });
        c.end();
      });
    }
  }
}

function display(argv: string[]): string {
  const s = argv.map(shQuote).join(' ');
  return s.length > 120 ? `${s.slice(0, 117)}...` : s;
}

function tail(chunks: Buffer[], n = 10): string[] {
  return Buffer.concat(chunks).toString('utf8').trimEnd().split('\n').filter(Boolean).slice(-n);
}
