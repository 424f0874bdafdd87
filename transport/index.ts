// Public surface of the SSH transport.
export { connect, fingerprint, parseProxyJump } from './ssh.ts';
export type { ConnectOptions, ExecOptions, ExecResult, Session, SshTarget, WriteOptions } from './ssh.ts';
export { shJoin, shQuote } from './quote.ts';
export { readOnly, isReadOnlyCommand, WriteOutsideWetError, type ReadSession } from './read-only.ts';
export {
  appendKnownHost, checkHostKey, entryMatchesHost, formatKnownHost, knownHostName, parseKnownHosts, readKnownHostsFile,
} from './known-hosts.ts';
export type { HostKeyCheck, KnownHostEntry } from './known-hosts.ts';
