// A foreign tool's flags, run on hardwire's host: each file its flags name is mapped by role to the
// file hardwire placed for the same certificate, key, kubeconfig or data dir (roles.ts). A flag
// naming a file hardwire has no counterpart for is not run, and is reported as not provable.
// kubeadm's addresses need no mapping: its config is generated from the host's own inventory entry
// (name, address, CIDRs, endpoint), so the addresses and ports it writes are the host's. k0s's flags
// are read from a k0s controller on a lab host of its own: that host's address and name become the
// host's (`hosts`); the ports are the same defaults (6443, 2379, 2380).
import { roleOf } from '../../planes/normalize.ts';
import type { Role, RoleFile } from './roles.ts';

export type Tool = 'kubeadm' | 'k0s';
export const TOOLS: readonly Tool[] = ['kubeadm', 'k0s'];

/** A value of the tool's host that is the prove host's on hardwire's side: its address (anywhere in a value) or its name (a whole value, or the name of a `name=url` pair: etcd's --initial-cluster). */
export interface HostValue {
  from: string;
  to: string;
  what: string;
  whole?: boolean;
}

/** One flag of the tool's: its value, the value run (absent: not run) and how one became the other. */
export interface Translated {
  flag: string;
  original: string;
  run?: string;
  how: string;
  notProvable?: string;
}

/** kubeadm's layout: a path under /etc/kubernetes (or its etcd data dir) -> the role it holds. */
export function kubeadmRole(path: string): Role | undefined {
  if (path === '/var/lib/etcd') return 'dir:etcd-data';
  if (!path.startsWith('/etc/kubernetes/')) return undefined;
  const rel = path.slice('/etc/kubernetes/'.length);
  if (/^[\w-]+\.conf$/.test(rel)) return `kubeconfig:${rel.slice(0, -'.conf'.length)}`;
  if (rel === 'pki/sa.key' || rel === 'pki/sa.pub') return `file:${rel.slice('pki/'.length)}`;
  const m = /^pki\/(.+)\.(crt|key)$/.exec(rel);
  return m ? `${m[2] === 'crt' ? 'cert' : 'key'}:${roleOf(`pki/${m[1]}.crt`)}` : undefined;
}

/** k0s's names for the files kubeadm names otherwise (k0s v1.36.3+k0s.2, pkg/component/controller/{apiserver,controllermanager,scheduler}.go). */
const K0S_NAMES: Record<string, Role> = {
  'server.crt': 'cert:apiserver',
  'server.key': 'key:apiserver',
  'ccm.conf': 'kubeconfig:controller-manager',
  'scheduler.conf': 'kubeconfig:scheduler',
  'admin.conf': 'kubeconfig:admin',
};

/** k0s's layout: /var/lib/k0s/pki (kubeadm's names but for K0S_NAMES) and its etcd data dir; anything else (konnectivity, etcd's jwt keys, /run/k0s) has no role. */
export function k0sRole(path: string): Role | undefined {
  if (path === '/var/lib/k0s/etcd') return 'dir:etcd-data';
  if (!path.startsWith('/var/lib/k0s/pki/')) return undefined;
  const rel = path.slice('/var/lib/k0s/pki/'.length);
  return (
    K0S_NAMES[rel] ??
    (/^(etcd\/)?(ca|server|peer|apiserver-[\w-]+|front-proxy-[\w-]+)\.(crt|key)$|^sa\.(key|pub)$/.test(
      rel,
    )
      ? kubeadmRole(`/etc/kubernetes/pki/${rel}`)
      : undefined)
  );
}

const ROLE_OF: Record<Tool, (path: string) => Role | undefined> = {
  kubeadm: kubeadmRole,
  k0s: k0sRole,
};

/** Replaces the tool host's values in one non-path part of a value; says what it replaced. */
function hostPart(part: string, hosts: HostValue[], hows: string[]): string {
  let out = part;
  for (const h of hosts) {
    const pair = h.whole && out.startsWith(`${h.from}=`);
    if (h.from === h.to || !(h.whole ? out === h.from || pair : out.includes(h.from))) continue;
    out = pair
      ? `${h.to}${out.slice(h.from.length)}`
      : h.whole
        ? h.to
        : out.replaceAll(h.from, h.to);
    hows.push(`${h.what} ${h.from} -> the host's ${h.to}`);
  }
  return out;
}

/** `--name=value` -> [name, value]; a bare `--name` is `true`. */
function split(arg: string): [string, string] {
  const eq = arg.indexOf('=');
  return eq < 0
    ? [arg.replace(/^-+/, ''), 'true']
    : [arg.slice(0, eq).replace(/^-+/, ''), arg.slice(eq + 1)];
}

/** One flag: every comma-separated part that is an absolute path (or `key=/path`, as in etcd's --auth-token) goes through its role; anything else is run as given, the tool host's values replaced. */
export function translateFlag(
  tool: Tool,
  flag: string,
  original: string,
  files: Map<Role, RoleFile>,
  hosts: HostValue[] = [],
): Translated {
  const hows: string[] = [];
  const parts: string[] = [];
  for (const whole of original.split(',')) {
    const [, key = '', part = ''] = /^([\w-]+=)?(\/.*)$/.exec(whole) ?? [];
    if (!part) {
      parts.push(hostPart(whole, hosts, hows));
      continue;
    }
    const role = ROLE_OF[tool](part);
    if (!role)
      return {
        flag,
        original,
        how: 'no role',
        notProvable: `${tool}'s ${part} is no file of a role hardwire knows (a certificate, key, kubeconfig or data dir of its table)`,
      };
    const f = files.get(role);
    if (!f)
      return {
        flag,
        original,
        how: `role ${role}`,
        notProvable: `hardwire places no file for ${tool}'s ${part} (role ${role}) on this host`,
      };
    parts.push(`${key}${f.run ?? f.path}`);
    hows.push(`${part}: role ${role}, ${f.how}${f.run ? ` (${f.path})` : ''}`);
  }
  const run = parts.join(',');
  return { flag, original, run, how: hows.length ? hows.join('; ') : `as ${tool} passes it` };
}

/** The tool's argv (argv[0] its binary) -> every flag translated, and the argv to run (argv[0] kept; untranslatable flags left out). */
export function translateArgv(
  tool: Tool,
  argv: string[],
  files: Map<Role, RoleFile>,
  hosts: HostValue[] = [],
): { argv: string[]; flags: Translated[] } {
  const flags = argv
    .slice(1)
    .filter((a) => a.startsWith('--'))
    .map((a) => translateFlag(tool, ...split(a), files, hosts));
  return {
    argv: [
      argv[0]!,
      ...flags.filter((t) => t.run !== undefined).map((t) => `--${t.flag}=${t.run}`),
    ],
    flags,
  };
}

/** The hardwire files a translation runs with (not the credential paths, which exist only while the unit runs): each must exist on the host. */
export function translatedPaths(
  flags: Translated[],
  files: Map<Role, RoleFile>,
): Map<string, string[]> {
  const byPath = new Map<string, string[]>();
  for (const t of flags) {
    for (const f of files.values()) {
      if (
        t.run
          ?.split(',')
          .map((p) => p.replace(/^[\w-]+=(?=\/)/, ''))
          .includes(f.run ?? f.path)
      )
        byPath.set(f.path, [...(byPath.get(f.path) ?? []), t.flag]);
    }
  }
  return byPath;
}
