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

/** The commands wire and the components run on a host (kubeadm's InPathCheck list, and hardwire's own). */
export const HOST_COMMANDS = [
  'systemctl',
  'journalctl',
  'ip',
  'sha256sum',
  'mktemp',
  'chown',
  'chmod',
  'useradd',
  'stat',
  'cut',
  'ss',
  'nft',
  'mount',
  'losetup',
] as const;

/**
 * Everything preflight reads on a host (core/preflight/read.ts parses it): OS, kernel, architecture,
 * cgroups, swap, sysctls, modules, disk, memory, missing commands, listening sockets, the clock.
 */
export const PREFLIGHT_READ = [
  'o() { printf \'%s\\t%s\\n\' "$1" "$2"; }',
  '. /etc/os-release 2>/dev/null; o os "${PRETTY_NAME:-unknown}"',
  'o kernel "$(uname -r)"; o arch "$(uname -m)"',
  'o cgroupfs "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)"',
  'o controllers "$(cat /sys/fs/cgroup/cgroup.controllers 2>/dev/null)"',
  'v=; while read -r n h c e; do [ "$e" = 1 ] && v="$v $n"; done < /proc/cgroups; o v1controllers "${v# }"',
  'n=0; while read -r l; do n=$((n+1)); done < /proc/swaps; o swaps $((n-1))',
  'o ip_forward "$(cat /proc/sys/net/ipv4/ip_forward 2>/dev/null)"',
  'if [ -w /proc/sys/net/ipv4/ip_forward ]; then o sysctl_net rw; else o sysctl_net ro; fi',
  'o bridge_nf "$(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null)"',
  // overlay may be built in (no /sys/module/overlay); br_netfilter's sysctls exist once it is loaded.
  'm=; grep -qw overlay /proc/filesystems && m=overlay; [ -d /proc/sys/net/bridge ] && m="$m br_netfilter"; o modules "${m# }"',
  'if [ -w /proc/sys/net/netfilter/nf_conntrack_max ]; then o conntrack rw; else o conntrack ro; fi',
  'o virt "$(systemd-detect-virt 2>/dev/null)"',
  'o pid1 "$(cat /proc/1/comm)"',
  'o disk "$(df -k --output=avail,size /var/lib | tail -n 1)"',
  'o memkb "$(while read -r k v u; do [ "$k" = MemTotal: ] && echo $v; done < /proc/meminfo)"',
  'o cpus "$(nproc)"',
  `for c in ${HOST_COMMANDS.join(' ')}; do command -v $c >/dev/null 2>&1 || o missing $c; done`,
  'ss -ltnpH 2>/dev/null | while read -r st q s local peer proc; do o listen "$local $proc"; done',
  'o now "$(date +%s.%N)"',
].join('\n');

/** The scripts `sh -c` may run in a read-only session. */
export const READ_SCRIPTS: ReadonlySet<string> = new Set([PROC_DUMP, PREFLIGHT_READ]);

/**
 * One GET on the apiserver a kubeconfig on the host names, made on the host by curl with that
 * kubeconfig's own CA and client certificate, so its key never leaves the host (audit's read of
 * the objects in removed APIs). bash for the process substitutions: the credentials go to curl
 * through pipes, never a file. Arguments: the root the kubeconfig is read under ("" or
 * /proc/<pid>/root), the kubeconfig's path, the API path. Prints the server's URL on the first line,
 * then the body, then the status on a line of its own. Only the first cluster and user are read (a component's kubeconfig has one).
 */
export const KUBE_GET = [
  'r=$1; k=$r$2; p=$3',
  'case $p in /*) ;; *) echo "not an API path: $p" >&2; exit 2;; esac',
  'f() { sed -n "s/^[[:space:]]*$1:[[:space:]]*//p" "$k" | head -n 1 | tr -d "\\"\'"; }',
  'd() { v=$(f "$1-data"); if [ -n "$v" ]; then printf %s "$v" | base64 -d; else v=$(f "$1"); [ -n "$v" ] && cat "$r$v"; fi; }',
  '[ -r "$k" ] || { echo "cannot read $k" >&2; exit 2; }',
  's=$(f server)',
  'printf \'%s\\n\' "$s"',
  'curl -sS --max-time 30 --cacert <(d certificate-authority) --cert <(d client-certificate) --key <(d client-key) -w \'\\n%{http_code}\\n\' "$s$p"',
].join('\n');

/** The bash scripts a read-only session may run with arguments (`bash -c SCRIPT NAME ARGS...`), and how many. */
export const ARG_SCRIPTS: ReadonlyMap<string, { name: string; args: number }> = new Map([
  [KUBE_GET, { name: 'kube-get', args: 3 }],
]);
