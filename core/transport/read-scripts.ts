// Shell scripts a read-only session may run (read-only.ts): each only reads, and is one of these
// exact strings, so that `sh -c` cannot carry a write past the check.

/**
 * Every process's stat line (pid, comm, ppid), its cgroup (the kubepods path if it has one, else its
 * systemd one) and its cmdline, one line each. Builtins only inside the loop but `tr`: a host with a
 * few hundred processes is read in about a second.
 */
export const PROC_DUMP = [
  'for d in /proc/[0-9]*; do',
  '  read -r s 2>/dev/null < $d/stat || continue',
  "  g=''; k=''",
  '  while read -r l; do case "$l" in *kubepods*) [ -z "$k" ] && k=${l#*:*:};; *:name=systemd:*|0::*) [ -z "$g" ] && g=${l#*:*:};; esac; done 2>/dev/null < $d/cgroup',
  "  a=$(tr '\\000\\t\\n' '\\001  ' 2>/dev/null < $d/cmdline)",
  '  printf \'%s\\t%s\\t%s\\n\' "$s" "${k:-$g}" "$a"',
  'done',
].join('\n');

/** The scripts `sh -c` may run in a read-only session. */
export const READ_SCRIPTS: ReadonlySet<string> = new Set([PROC_DUMP]);
