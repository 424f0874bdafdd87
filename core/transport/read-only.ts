// The session every phase gets: it can read a host, and nothing else. Writes exist only inside
// ctx.wet.run (apply/wet.ts), which hands its callback the writable session and never calls it in
// a dry run. So a dry run cannot write: code outside Wet has no session to write with, and a
// mutating command run through this one throws before it is sent.
import { BIN_DIR } from '../../lib/constants.ts';
import { shJoin } from '../../lib/quote.ts';
import { ARG_SCRIPTS, READ_SCRIPTS } from './read-scripts.ts';
import type { ExecOptions, ExecResult, Session, SshTarget } from './session.ts';

export interface ReadSession {
  readonly host: SshTarget;
  exec(argv: string[], opts?: ExecOptions): Promise<ExecResult>;
  readFile(path: string): Promise<Buffer>;
  sha256(path: string): Promise<string | null>;
  sha256Many(paths: string[]): Promise<Map<string, string | null>>;
  openLocalPort(port: number): ReturnType<Session['openLocalPort']>;
}

const words = (args: string[]) => args.filter((a) => !a.startsWith('-'));

/** Commands that only read, by program, with a check of their arguments where the program can also write. */
const READERS: Record<string, (args: string[]) => boolean> = {
  cat: () => true,
  ls: () => true,
  test: () => true,
  grep: () => true,
  stat: () => true,
  sha256sum: () => true,
  journalctl: (a) => !a.some((x) => /^--(rotate|vacuum|flush|sync|relinquish)/.test(x)),
  // Addresses, links and routes: the VIP gate asks which host holds the address.
  ip: (a) => {
    const [object, verb] = words(a);
    return (
      ['addr', 'address', 'link', 'route'].includes(object ?? '') &&
      (verb === undefined || verb === 'show' || verb === 'list')
    );
  },
  systemctl: (a) =>
    [
      'show',
      'status',
      'is-active',
      'is-enabled',
      'is-failed',
      'list-unit-files',
      'list-units',
      'cat',
    ].includes(words(a)[0] ?? ''),
  [`${BIN_DIR}/etcdctl`]: (a) => {
    const [verb, sub] = words(a);
    return verb === 'get' || verb === 'endpoint' || (verb === 'member' && sub === 'list');
  },
  // A process's PID by name, and who listens on a port (compare's node endpoint); never ss's --kill.
  pgrep: () => true,
  ss: (a) => !a.some((x) => x === '-K' || x === '--kill' || /^-[a-zA-Z]*K/.test(x)),
  // containerd's client: its version, and listings (the workers' gates read images; tests read containers and tasks).
  [`${BIN_DIR}/ctr`]: (a) => {
    const rest = a[0] === '-n' || a[0] === '--namespace' ? a.slice(2) : a;
    const [verb, sub] = words(rest);
    return (
      verb === 'version' ||
      (['images', 'containers', 'tasks'].includes(verb ?? '') && ['ls', 'list'].includes(sub ?? ''))
    );
  },
};

/** Binary name → the exact arguments that make it print its version (audit's: `--version`, k0s's `version`). */
export type VersionArgs = Readonly<Record<string, readonly string[]>>;

const same = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * versioned: binaries whose file, by absolute path, may be asked its version with exactly those
 * arguments (audit's, as a user who cannot read /proc/<pid>/exe).
 */
export function isReadOnlyCommand(argv: string[], versioned: VersionArgs = {}): boolean {
  const [prog, ...args] = argv;
  // A registered script only, never one built from input.
  if (prog === 'sh') return args.length === 2 && args[0] === '-c' && READ_SCRIPTS.has(args[1]!);
  // A registered script with its arguments as data ($1...), never as code.
  if (prog === 'bash') {
    const s = args[0] === '-c' ? ARG_SCRIPTS.get(args[1] ?? '') : undefined;
    return s !== undefined && args[2] === s.name && args.length === 3 + s.args;
  }
  // A running process's own binary, asked its version (audit: the version of what runs, not of a
  // file on PATH); as a user who cannot read /proc/<pid>/exe, the component binary its argv names.
  if (prog !== undefined && /^\/proc\/\d+\/exe$/.test(prog)) return same(args, ['--version']);
  const base = prog?.startsWith('/') ? prog.slice(prog.lastIndexOf('/') + 1) : undefined;
  if (base !== undefined && Object.hasOwn(versioned, base)) return same(args, versioned[base]!);
  const check = prog !== undefined && Object.hasOwn(READERS, prog) ? READERS[prog] : undefined;
  return check !== undefined && check(args);
}

export class WriteOutsideWetError extends Error {}

export function readOnly(s: Session, versioned: VersionArgs = {}): ReadSession {
  return {
    host: s.host,
    exec(argv, opts) {
      if (!isReadOnlyCommand(argv, versioned)) {
        return Promise.reject(
          new WriteOutsideWetError(
            `[${s.host.name}] "${shJoin(argv)}" is not a read-only command; host changes go through ctx.wet.run`,
          ),
        );
      }
      return s.exec(argv, opts);
    },
    readFile: (p) => s.readFile(p),
    sha256: (p) => s.sha256(p),
    sha256Many: (ps) => s.sha256Many(ps),
    openLocalPort: (port) => s.openLocalPort(port),
  };
}
