// The one way hardwire turns an argv array into a remote command line: POSIX single quoting.
// SSH sends a string that the remote login shell parses, so every argument is quoted, never concatenated raw.

/** Characters that no POSIX shell treats specially anywhere in a word. */
const SAFE = /^[A-Za-z0-9_\/.,:=@%+-]+$/;

/** Quotes one argument so a POSIX shell reads it back byte for byte. */
export function shQuote(arg: string): string {
  if (arg.includes('\0')) throw new Error('shQuote: an argument cannot contain a NUL byte');
  if (arg === '') return "''";
  if (SAFE.test(arg)) return arg;
  // Inside single quotes nothing is special except the quote itself: close, emit \', reopen.
  return `'${arg.replaceAll("'", "'\\''")}'`;
}

/** Joins argv into one command line for `sh -c`. */
export function shJoin(argv: readonly string[]): string {
  if (argv.length === 0) throw new Error('shJoin: empty argv');
  return argv.map(shQuote).join(' ');
}
