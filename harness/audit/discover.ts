// What runs on a host, read from /proc through a read-only session: each Kubernetes process (by its
// binary's name), its argv, the version its own binary reports (/proc/<pid>/exe, not a file on
// PATH), its config file as the process sees it, and the certificates its flags and fields name.
import { basename } from 'node:path';
import type { ReadSession } from '../../core/transport/index.ts';
import type { ExecResult } from '../../core/transport/session.ts';
import type { VersionArgs } from '../../core/transport/read-only.ts';
import { FLAG_MAP_NAMES } from '../../core/components/registry/index.ts';
import { dump } from '../planes/proc-read.ts';
import { certPaths, checkCerts } from './certs.ts';
import { mapConfig, mapFlags, mapFor } from './flags.ts';
import type { AuditHost, AuditProcess } from './types.ts';

/** The binaries audit reports, by their file name, with the arguments that print each one's version. */
export const VERSION_ARGS: VersionArgs = Object.fromEntries([
  ...[...FLAG_MAP_NAMES, 'containerd'].map((n) => [n, ['--version']] as const),
  ['k0s', ['version']] as const,
]);

/** `Kubernetes v1.36.3`, `etcd Version: 3.6.8`, `v1.36.3+k0s.2` (build metadata kept), `containerd … v2.1.4 …`. */
export function versionOf(out: string): string | undefined {
  const m = /\bv?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?(?:\+[0-9A-Za-z.]+)?)/.exec(out);
  return m ? `v${m[1]}` : undefined;
}

const firstLine = (t: string) => t.trim().split('\n')[0] ?? '';

/** A file as the process sees it (its mount namespace); the host's own path when /proc/<pid>/root cannot be read. */
export async function readAsProcess(
  s: ReadSession,
  pid: number,
  path: string,
): Promise<{ text: string; source: string } | undefined> {
  for (const file of [`/proc/${pid}/root${path}`, path]) {
    const r = await s.exec(['cat', file], { allowFail: true });
    if (r.code === 0) return { text: r.stdout, source: file };
  }
  return undefined;
}

/**
 * The version the process's own binary prints: /proc/<pid>/exe --version; k0s (whose version is a
 * subcommand, which /proc/<pid>/exe may not be asked) and, as a user who cannot run another user's
 * /proc/<pid>/exe, the file its argv names, said in the notes since it may since have been replaced.
 */
async function runVersion(
  s: ReadSession,
  pid: number,
  argv0: string,
  notes: string[],
): Promise<{ v: ExecResult; versionSource: string }> {
  const args = VERSION_ARGS[basename(argv0)]!;
  const run = (argv: string[]) => s.exec(argv, { allowFail: true, timeoutMs: 20_000 });
  const byPath = argv0.startsWith('/');
  const own = `/proc/${pid}/exe`;
  if (args[0] === '--version' || !byPath) {
    const v = await run([own, '--version']);
    if (v.code === 0 || !byPath) return { v, versionSource: `${own} --version` };
    const again = await run([argv0, ...args]);
    if (again.code === 0)
      notes.push(
        `version read from ${argv0} --version, the file on disk now: ${own} could not be run (${firstLine(v.stderr) || `exit ${v.code}`})`,
      );
    return { v: again, versionSource: `${argv0} --version` };
  }
  return { v: await run([argv0, ...args]), versionSource: `${argv0} ${args.join(' ')}` };
}

export async function auditHost(
  s: ReadSession,
  host: { name: string; address: string },
  partial: string[],
  onDemand?: Parameters<typeof mapFor>[2],
): Promise<AuditHost> {
  const lost = (what: string) => partial.push(`${host.name}: ${what}`);
  const found = (await dump(s)).filter((p) =>
    Object.hasOwn(VERSION_ARGS, basename(p.argv[0] ?? '')),
  );
  const processes: AuditProcess[] = [];
  const named: { pid: number; path: string; namedBy: string }[] = [];
  for (const p of found.sort((a, b) => a.pid - b.pid)) {
    const component = basename(p.argv[0]!);
    const notes: string[] = [];
    const { v, versionSource } = await runVersion(s, p.pid, p.argv[0]!, notes);
    const version = v.code === 0 ? versionOf(v.stdout) : undefined;
    if (!version) {
      const said =
        v.code === 0
          ? `printed no version: ${firstLine(v.stdout)}`
          : firstLine(v.stderr) || `exit ${v.code}`;
      const why = `${component} (pid ${p.pid}): its version could not be read (${versionSource}: ${said})`;
      notes.push(why);
      lost(why);
    }
    const m = mapFor(component, version, onDemand);
    if ('why' in m) notes.push(m.why);
    const flags = mapFlags(p.argv, m);
    const proc: AuditProcess = {
      component,
      pid: p.pid,
      argv: p.argv,
      ...(version ? { version } : {}),
      versionSource,
      ...('map' in m ? { map: m.file } : {}),
      flags,
      notes,
    };
    const configPath =
      component === 'kubelet' || component === 'kube-proxy'
        ? flags.find((f) => f.name === 'config')?.value
        : undefined;
    if (configPath) {
      const file = await readAsProcess(s, p.pid, configPath);
      if (file)
        proc.config = { path: configPath, source: file.source, fields: mapConfig(file.text, m) };
      else lost(`${component} (pid ${p.pid}): its --config ${configPath} could not be read`);
    }
    for (const c of certPaths(flags, proc.config?.fields ?? []))
      if (!named.some((n) => n.path === c.path))
        named.push({ pid: p.pid, path: c.path, namedBy: `${component} ${c.namedBy}` });
    processes.push(proc);
  }
  const files: { path: string; namedBy: string; pem: string }[] = [];
  for (const n of named) {
    const file = await readAsProcess(s, n.pid, n.path);
    if (file) files.push({ path: n.path, namedBy: n.namedBy, pem: file.text });
    else lost(`${n.path} (named by ${n.namedBy}) could not be read`);
  }
  return {
    name: host.name,
    address: host.address,
    reachable: true,
    processes,
    certs: checkCerts(files),
    notes: found.length ? [] : ['no Kubernetes process runs here'],
  };
}
