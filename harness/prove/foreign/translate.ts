// A foreign tool's flags, run on hardwire's host: each file its flags name is mapped by role to the
// file hardwire placed for the same certificate, key, kubeconfig or data dir (roles.ts). A flag
// naming a file hardwire has no counterpart for is not run, and is reported as not provable.
// Addresses need no mapping: the tool's config is generated from the host's own inventory entry
// (name, address, CIDRs, endpoint), so the addresses and ports it writes are the host's.
import { roleOf } from '../../compare/normalize.ts';
import type { Role, RoleFile } from './roles.ts';

export type Tool = 'kubeadm';
export const TOOLS: readonly Tool[] = ['kubeadm'];

/** One flag of the tool's: its value, the value run (absent: not run) and how one became the other. */
export interface Translated { flag: string; original: string; run?: string; how: string; notProvable?: string }

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

const ROLE_OF: Record<Tool, (path: string) => Role | undefined> = { kubeadm: kubeadmRole };

/** `--name=value` -> [name, value]; a bare `--name` is `true`. */
function split(arg: string): [string, string] {
  const eq = arg.indexOf('=');
  return eq < 0 ? [arg.replace(/^-+/, ''), 'true'] : [arg.slice(0, eq).replace(/^-+/, ''), arg.slice(eq + 1)];
}

/** One flag: every comma-separated part that is an absolute path goes through its role; anything else is run as given. */
export function translateFlag(tool: Tool, flag: string, original: string, files: Map<Role, RoleFile>): Translated {
  const hows: string[] = [];
  const parts: string[] = [];
  for (const part of original.split(',')) {
    if (!part.startsWith('/')) { parts.push(part); continue; }
    const role = ROLE_OF[tool](part);
    if (!role) return { flag, original, how: 'no role', notProvable: `${tool}'s ${part} is no file of a role hardwire knows (a certificate, key, kubeconfig or data dir of its table)` };
    const f = files.get(role);
    if (!f) return { flag, original, how: `role ${role}`, notProvable: `hardwire places no file for ${tool}'s ${part} (role ${role}) on this host` };
    parts.push(f.run ?? f.path);
    hows.push(`${part}: role ${role}, ${f.how}${f.run ? ` (${f.path})` : ''}`);
  }
  const run = parts.join(',');
  return { flag, original, run, how: hows.length ? hows.join('; ') : `as ${tool} passes it` };
}

/** The tool's argv (argv[0] its binary) -> every flag translated, and the argv to run (argv[0] kept; untranslatable flags left out). */
export function translateArgv(tool: Tool, argv: string[], files: Map<Role, RoleFile>): { argv: string[]; flags: Translated[] } {
  const flags = argv.slice(1).filter((a) => a.startsWith('--')).map((a) => translateFlag(tool, ...split(a), files));
  return { argv: [argv[0]!, ...flags.filter((t) => t.run !== undefined).map((t) => `--${t.flag}=${t.run}`)], flags };
}

/** The hardwire files a translation runs with (not the credential paths, which exist only while the unit runs): each must exist on the host. */
export function translatedPaths(flags: Translated[], files: Map<Role, RoleFile>): Map<string, string[]> {
  const byPath = new Map<string, string[]>();
  for (const t of flags) {
    for (const f of files.values()) {
      if (t.run?.split(',').includes(f.run ?? f.path)) byPath.set(f.path, [...(byPath.get(f.path) ?? []), t.flag]);
    }
  }
  return byPath;
}
