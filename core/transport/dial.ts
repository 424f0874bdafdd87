// Dialling: one authenticated SSH connection to a host, through its jump hosts, with pinned host
// keys (an unknown key refused unless accepted, a changed one always). transport/session.ts is what
// the connection then does.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Client, type ClientChannel, type ConnectConfig } from 'ssh2';
import { InputError, StepError } from '../../lib/errors.ts';
import { expandHome } from '../../lib/paths.ts';
import {
  appendKnownHost,
  checkHostKey,
  formatKnownHost,
  keyTypeOfBlob,
  knownHostName,
  pinnedKeyTypes,
  readKnownHostsFile,
  type HostKeyCheck,
} from './known-hosts.ts';
import {
  forward,
  MAX_CHANNELS,
  SshSession,
  sshAddressOf,
  type Session,
  type SshTarget,
} from './session.ts';

export interface ConnectOptions {
  /** Pinned host keys; defaults to ~/.ssh/known_hosts like OpenSSH. */
  knownHostsFile?: string;
  /** Trust and record a key for a host that has none yet. A changed key is refused regardless. */
  acceptNewHostKeys?: boolean;
  /** Time for TCP connect + handshake + auth, per hop. Default 10 s. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;

export function fingerprint(keyBlob: Buffer): string {
  return `SHA256:${createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '')}`;
}

interface Hop {
  user: string;
  address: string;
  port: number;
}

/** Parses `[user@]host[:port]` hops, comma separated like OpenSSH's ProxyJump. */
export function parseProxyJump(spec: string, defaultUser: string): Hop[] {
  if (spec.trim() === '') return [];
  return spec.split(',').map((part) => {
    const m = /^(?:([^@\s]+)@)?(\[[^\]]+\]|[^:@\s]+)(?::(\d{1,5}))?$/.exec(part.trim());
    const port = m?.[3] === undefined ? 22 : Number(m[3]);
    if (!m || port < 1 || port > 65535)
      throw new InputError('ssh.proxyJump', `"${part}" is not [user@]host[:port]`);
    return { user: m[1] ?? defaultUser, address: m[2]!.replace(/^\[|\]$/g, ''), port };
  });
}

function loadPrivateKey(target: SshTarget, hasAgent: boolean): Buffer | undefined {
  const file = expandHome(target.ssh.identityFile);
  if (!existsSync(file)) {
    if (hasAgent) return undefined;
    throw new InputError(
      'ssh.identityFile',
      `${file} (host ${target.name}) does not exist and SSH_AUTH_SOCK is not set; point identityFile at a private key`,
    );
  }
  return readFileSync(file);
}

/** Connects one hop. `sock` is the forwarded stream from the previous hop, if any. */
function connectHop(
  hop: Hop,
  hostName: string,
  key: Buffer | undefined,
  identityFile: string,
  opts: ConnectOptions,
  knownHostsFile: string,
  sock?: ClientChannel,
): Promise<Client> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const name = knownHostName(hop.address, hop.port);
  const entries = readKnownHostsFile(knownHostsFile);
  let verdict: { check: HostKeyCheck; key: Buffer } | undefined;
  const where = `${hop.address}:${hop.port}`;

  const pinned = pinnedKeyTypes(entries, name);
  const defaults = [
    'ssh-ed25519',
    'ecdsa-sha2-nistp256',
    'ecdsa-sha2-nistp384',
    'ecdsa-sha2-nistp521',
    'rsa-sha2-512',
    'rsa-sha2-256',
  ];
  // Ask for the pinned key types first, so a host with several keys presents the one we know.
  const pinnedAlgos = pinned
    .flatMap((t) => (t === 'ssh-rsa' ? ['rsa-sha2-512', 'rsa-sha2-256'] : [t]))
    .filter((t) => defaults.includes(t));
  const serverHostKey = [...new Set([...pinnedAlgos, ...defaults])];

  const config: ConnectConfig = {
    host: hop.address,
    port: hop.port,
    username: hop.user,
    readyTimeout: timeoutMs,
    keepaliveInterval: 5000,
    keepaliveCountMax: 3,
    algorithms: {
      serverHostKey: serverHostKey as NonNullable<ConnectConfig['algorithms']>['serverHostKey'],
    },
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
      if (
        verdict &&
        verdict.check.status !== 'match' &&
        !(verdict.check.status === 'unknown' && opts.acceptNewHostKeys)
      ) {
        return fail(hostKeyError(verdict.check, verdict.key, hostName, where, knownHostsFile));
      }
      if (err.level === 'client-timeout') {
        return fail(
          new StepError(
            'ssh-connect-timeout',
            `no SSH handshake from ${where} within ${timeoutMs} ms; is the host up and its network reachable?`,
            { host: hostName, cause: err },
          ),
        );
      }
      if (err.level === 'client-authentication') {
        const tried = [
          key ? `key ${identityFile}` : '',
          process.env.SSH_AUTH_SOCK ? 'agent' : '',
        ].filter(Boolean);
        return fail(
          new StepError(
            'ssh-auth',
            `authentication as ${hop.user}@${where} failed (tried: ${tried.join(', ') || 'nothing'}); is the public key in ~${hop.user}/.ssh/authorized_keys?`,
            { host: hostName, cause: err },
          ),
        );
      }
      const code = err.code ? ` (${err.code})` : '';
      fail(
        new StepError('ssh-connect', `cannot connect to ${where}${code}: ${err.message}`, {
          host: hostName,
          cause: err,
        }),
      );
    });
    client.on('close', () =>
      fail(
        new StepError('ssh-connect', `connection to ${where} closed during the handshake`, {
          host: hostName,
        }),
      ),
    );
    client.connect(config);
  });
}

function hostKeyError(
  check: HostKeyCheck,
  key: Buffer,
  hostName: string,
  where: string,
  file: string,
): StepError {
  const fp = `${keyTypeOfBlob(key)} ${fingerprint(key)}`;
  if (check.status === 'changed') {
    return new StepError(
      'ssh-host-key-changed',
      `host key for ${where} has CHANGED: the server presented ${fp}, but ${file}:${check.entry.line} pins ${check.entry.keyType} ${fingerprint(check.entry.key)}. Refusing to connect; if the host was really reinstalled, remove that line.`,
      { host: hostName },
    );
  }
  if (check.status === 'revoked') {
    return new StepError(
      'ssh-host-key-revoked',
      `host key ${fp} of ${where} is marked @revoked in ${file}:${check.entry.line}; refusing to connect`,
      { host: hostName },
    );
  }
  return new StepError(
    'ssh-host-key-unknown',
    `host key ${fp} of ${where} is not in ${file}; verify it out of band and add it (or allow accepting new keys)`,
    { host: hostName },
  );
}

/** Opens an authenticated, host-key-pinned session to an inventory host. */
export async function connect(target: SshTarget, opts: ConnectOptions = {}): Promise<Session> {
  const knownHostsFile = opts.knownHostsFile ?? join(homedir(), '.ssh', 'known_hosts');
  const key = loadPrivateKey(target, Boolean(process.env.SSH_AUTH_SOCK));
  const hops = [
    ...parseProxyJump(target.ssh.proxyJump, target.ssh.user),
    // The last hop, whose host key is pinned under the address dialled: ssh.address when set.
    { user: target.ssh.user, address: sshAddressOf(target), port: target.ssh.port },
  ];
  const clients: Client[] = [];
  try {
    let sock: ClientChannel | undefined;
    for (const [i, hop] of hops.entries()) {
      if (i > 0) sock = await forward(clients[i - 1]!, hop.address, hop.port, target.name);
      clients.push(
        await connectHop(
          hop,
          target.name,
          key,
          expandHome(target.ssh.identityFile),
          opts,
          knownHostsFile,
          sock,
        ),
      );
    }
  } catch (err) {
    for (const c of clients.reverse()) c.end();
    throw err;
  }
  return new SshSession(target, clients);
}
