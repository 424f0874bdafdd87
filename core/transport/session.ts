// Session operations on an open SSH connection: argv-only remote commands (at most MAX_CHANNELS at
// once), atomic file writes, hashes, and tunnels to loopback ports. transport/dial.ts opens the connection.
import type { Client, ClientChannel } from 'ssh2';
import type { HostDoc } from '../inventory/schema.ts';
import { InputError, StepError } from '../../lib/errors.ts';
import { shJoin, shQuote } from '../../lib/quote.ts';
import { BATCH_SCRIPT, batchArgs, tarOf, type BatchFile } from './batch.ts';

/** What the transport needs of an inventory host (an inventory `Host` fits). */
export type SshTarget = Pick<HostDoc, 'name' | 'address' | 'ssh'>;

/** The address SSH dials, and pins the host key under: ssh.address when set, else the cluster address. */
export function sshAddressOf(host: { address: string; ssh?: { address?: string } }): string {
  return host.ssh?.address ?? host.address;
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
  /** A stream to a unix socket on the host (OpenSSH's direct-streamlocal): reached as the SSH user, guarded by the socket's file mode. */
  openLocalSocket(path: string): Promise<ClientChannel>;
  close(): Promise<void>;
}

/** sshd's MaxSessions defaults to 10 channels per connection; stay under it. */
export const MAX_CHANNELS = 6;

/** A channel from `client` to address:port (a jump host's next hop, or a host's loopback port). */
export function forward(
  client: Client,
  address: string,
  port: number,
  hostName: string,
  step = 'ssh-proxy-jump',
  who = 'jump host',
): Promise<ClientChannel> {
  return new Promise((resolve, reject) => {
    client.forwardOut('127.0.0.1', 0, address, port, (err, stream) => {
      if (err)
        reject(
          new StepError(
            step,
            `${who} could not open a channel to ${address}:${port}: ${err.message}`,
            { host: hostName, cause: err },
          ),
        );
      else resolve(stream);
    });
  });
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
const HASH_SCRIPT =
  'for f do if [ -f "$f" ]; then sha256sum < "$f" | cut -d" " -f1; else echo -; fi; done';

interface RawResult {
  code: number;
  signal?: string;
  stdout: Buffer;
  stderr: Buffer;
}

export class SshSession implements Session {
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
      this.#lost ??= new StepError(
        'ssh-connection-lost',
        `connection to ${sshAddressOf(host)} was lost`,
        { host: host.name },
      );
    };
    this.#client.on('close', onLost);
    this.#client.on('error', onLost);
    this.#clients = [...clients].reverse(); // close the target first, then the jump hosts
    this.#closed = this.#clients.map(() => false);
    this.#clients.forEach((c, i) =>
      c.once('close', () => {
        this.#closed[i] = true;
      }),
    );
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

  #runOnce(
    cmd: string,
    argv: string[],
    opts: ExecOptions,
    mayRetry: boolean,
  ): Promise<RawResult | 'refused'> {
    return new Promise((resolve, reject) => {
      this.#client.exec(cmd, (err, stream) => {
        if (err) {
          if (mayRetry && /open failed|Channel open failure/i.test(err.message))
            return resolve('refused');
          return reject(
            new StepError('ssh-exec', `cannot start ${display(argv)}: ${err.message}`, {
              host: this.host.name,
              cause: err,
            }),
          );
        }
        // Listeners go on synchronously: exit status and close can arrive in the same packet batch as the reply.
        const out: Buffer[] = [];
        const errOut: Buffer[] = [];
        let code = -1;
        let signal: string | undefined;
        let timer: NodeJS.Timeout | undefined;
        const onLost = () =>
          reject(
            this.#lost ??
              new StepError(
                'ssh-connection-lost',
                `connection lost while running ${display(argv)}`,
                { host: this.host.name },
              ),
          );
        this.#client.once('close', onLost);
        if (opts.timeoutMs) {
          timer = setTimeout(() => {
            stream.close();
            reject(
              new StepError(
                'ssh-exec-timeout',
                `${display(argv)} did not finish within ${opts.timeoutMs} ms`,
                { host: this.host.name, detail: tail(errOut) },
              ),
            );
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
          resolve({
            code,
            ...(signal ? { signal } : {}),
            stdout: Buffer.concat(out),
            stderr: Buffer.concat(errOut),
          });
        });
        if (typeof opts.stdin === 'function') {
          const src = opts.stdin();
          src.on('error', (e: Error) => {
            stream.close();
            reject(
              new StepError('ssh-exec', `stdin of ${display(argv)}: ${e.message}`, {
                host: this.host.name,
                cause: e,
              }),
            );
          });
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
      throw new StepError(step, `${display(argv)} failed (${how})`, {
        host: this.host.name,
        detail: tail([r.stderr]),
      });
    }
    return r;
  }

  async exec(argv: string[], opts: ExecOptions = {}): Promise<ExecResult> {
    const r = await this.#checked(argv, opts, 'remote-exec');
    return {
      code: r.code,
      ...(r.signal ? { signal: r.signal } : {}),
      stdout: r.stdout.toString('utf8'),
      stderr: r.stderr.toString('utf8'),
    };
  }

  async readFile(path: string): Promise<Buffer> {
    return (await this.#checked(['cat', '--', path], {}, 'remote-read')).stdout;
  }

  async writeFilesAtomic(files: BatchFile[]): Promise<void> {
    if (files.length === 0) return;
    for (const f of files) {
      if (!Number.isInteger(f.mode) || f.mode < 0 || f.mode > 0o7777)
        throw new InputError('mode', `${f.mode} is not a file mode; use e.g. 0o644`);
      if (!f.path.startsWith('/')) throw new InputError('path', `"${f.path}" must be absolute`);
    }
    await this.#checked(
      ['sh', '-c', BATCH_SCRIPT, 'sh', ...batchArgs(files)],
      { stdin: () => tarOf(files), timeoutMs: 600_000 },
      'remote-write',
    );
  }

  async writeFileAtomic(path: string, data: Buffer | string, opts: WriteOptions): Promise<void> {
    if (!Number.isInteger(opts.mode) || opts.mode < 0 || opts.mode > 0o7777)
      throw new InputError('mode', `${opts.mode} is not a file mode; use e.g. 0o644`);
    if (!path.startsWith('/')) throw new InputError('path', `"${path}" must be absolute`);
    await this.#checked(
      [
        'sh',
        '-c',
        WRITE_SCRIPT,
        'sh',
        path,
        opts.mode.toString(8),
        opts.owner ?? '',
        String(Buffer.byteLength(data)),
      ],
      { stdin: data },
      'remote-write',
    );
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

  openLocalPort(port: number): Promise<ClientChannel> {
    return this.#channel(() =>
      forward(this.#client, '127.0.0.1', port, this.host.name, 'ssh-forward', 'the host'),
    );
  }

  openLocalSocket(path: string): Promise<ClientChannel> {
    return this.#channel(
      () =>
        new Promise((resolve, reject) => {
          this.#client.openssh_forwardOutStreamLocal(path, (err, stream) => {
            if (err)
              reject(
                new StepError(
                  'ssh-forward',
                  `the host could not open a channel to the unix socket ${path}: ${err.message}`,
                  { host: this.host.name, cause: err },
                ),
              );
            else resolve(stream);
          });
        }),
    );
  }

  /** One of the MAX_CHANNELS slots for as long as the channel stays open. */
  async #channel(open: () => Promise<ClientChannel>): Promise<ClientChannel> {
    if (this.#lost) throw this.#lost;
    const release = await this.#slot();
    try {
      const stream = await open();
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
        const timer = setTimeout(() => {
          c.destroy();
          resolve();
        }, 1000);
        c.once('close', () => {
          clearTimeout(timer);
          resolve();
        });
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
