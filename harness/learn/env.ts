// The frame `hardwire learn` runs an exercise in: the drills' connected context (one SSH session per
// host), the admin's credentials, a bash that runs a learner's lines as typed, and the two readers
// the checks use besides the API: the apiserver's audit log on every control-plane host, and etcdctl.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Inventory } from '../../core/inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import type { WireContext } from '../../core/apply/context.ts';
import { run } from '../../lib/proc.ts';
import { adminCreds, adminKubeconfigPath } from '../../core/apply/creds.ts';
import { session } from '../../core/apply/context.ts';
import { kubeRequest } from '../../core/transport/kube-api.ts';
import { AUDIT_LOG_DIR } from '../../core/components/models/audit-policy.ts';
import { etcdctlArgv } from '../../core/gates/etcd.ts';
import { kubectlPath } from '../../core/components/binaries/cache.ts';
import { sshAddressOf } from '../../core/transport/session.ts';
import { parseProxyJump } from '../../core/transport/dial.ts';
import { defaultStateDir, expandHome } from '../../lib/paths.ts';
import { shJoin, shQuote } from '../../lib/quote.ts';
import { withConnected, type Connection } from '../drills/index.ts';
import type { AuditEvent, LearnEnv, Typed } from './types.ts';

/** The task list's namespace, as it types it. */
export const LEARN_NS = 'api-lab';

/** Ends each line's output in the one bash: a record separator, then the line's exit code. */
const MARK = '\x1ehardwire-learn-exit';

/** One bash script: every line runs in order in the same shell (so `kubectl proxy &` and variables carry), each followed by its mark. */
export function script(lines: readonly string[]): string {
  return lines.map((l) => `${l}\nprintf '\\n${MARK} %d\\n' $?\n`).join('');
}

/** Splits the script's output back into one Typed per line. */
export function splitTyped(lines: readonly string[], out: string): Typed[] {
  const parts = out.split(new RegExp(`\\n${MARK} (\\d+)\\n`));
  return lines.map((line, i) => ({
    line,
    output: (parts[2 * i] ?? '').trim(),
    code: parts[2 * i + 1] === undefined ? -1 : Number(parts[2 * i + 1]),
  }));
}

/** OpenSSH to one host as `hardwire lab ssh` reaches it: the inventory's key, pinned host keys, at most one jump host; a shell-quoted argv prefix, or why not. */
function sshTo(inv: Inventory, h: Inventory['hosts'][number]): { ssh: string } | { why: string } {
  const key = expandHome(h.ssh.identityFile);
  const pinned = [
    ...(existsSync(key) ? ['-i', key, '-o', 'IdentitiesOnly=yes'] : []),
    '-o',
    `UserKnownHostsFile=${inv.knownHostsFile ?? join(homedir(), '.ssh', 'known_hosts')}`,
    '-o',
    'GlobalKnownHostsFile=/dev/null',
    '-o',
    'StrictHostKeyChecking=yes',
    '-o',
    'BatchMode=yes',
  ];
  const hops = parseProxyJump(h.ssh.proxyJump, h.ssh.user);
  if (hops.length > 1)
    return {
      why: `${h.name} is behind ${hops.length} jump hosts; the demo's ssh takes at most one`,
    };
  const jump = hops.map((j) => [
    '-o',
    `ProxyCommand=${shJoin(['ssh', ...pinned, '-W', '%h:%p', `ssh://${j.user}@${j.address}:${j.port}`])}`,
  ]);
  return {
    ssh: shJoin([
      'ssh',
      '-n',
      ...pinned,
      ...jump.flat(),
      '-p',
      String(h.ssh.port),
      '-l',
      h.ssh.user,
      sshAddressOf(h),
      '--',
    ]),
  };
}

/**
 * The demo's `etcdctl`: the first etcd host's own, over OpenSSH with the inventory's key and pinned
 * host keys, with the cluster's client certificate, so a line reads as a learner types it on the lab
 * (`hardwire lab ssh node1 -- etcdctl --endpoints=... --cacert=... get KEY`). stdin is /dev/null: the
 * bash reads its script from stdin. Output is passed through byte for byte (a stored value is binary).
 */
export function etcdctlShim(inv: Inventory): string {
  const h = inv.etcdHosts[0]!;
  const to = sshTo(inv, h);
  if ('why' in to)
    return `#!/bin/bash
echo "etcdctl: ${to.why}" >&2
exit 1
`;
  return `#!/bin/bash
# etcdctl on ${h.name}, the first etcd host, with the cluster's client certificate: what
# \`hardwire lab ssh ${h.name} -- etcdctl ...\` runs. Written by hardwire learn for the demo's bash.
exec ${to.ssh} ${shQuote(shJoin(etcdctlArgv(inv)))}"$(printf ' %q' "$@")"
`;
}

/**
 * The demo's `hardwire`: this same CLI, with the inventory and state this run was given, so that a
 * line such as `hardwire trace apply ...` reaches the same cluster; `hardwire lab ssh HOST -- CMD`
 * runs CMD through that host's shell over OpenSSH as lab ssh does, for any inventory's host.
 */
export function hardwireShim(
  inv: Inventory,
  cliArgs: readonly string[],
  cli: readonly string[] = [process.execPath, process.argv[1]!],
): string {
  // Absolute: the demo's bash runs in a scratch directory, where the default .hardwire is not.
  const state = defaultStateDir();
  const cache = process.env.HARDWIRE_CACHE;
  const hosts = inv.hosts.map((h) => {
    const to = sshTo(inv, h);
    return `    ${shQuote(h.name)}) ${'ssh' in to ? `exec ${to.ssh} "$@"` : `echo ${shQuote(`hardwire lab ssh: ${to.why}`)} >&2; exit 1`} ;;`;
  });
  return `#!/bin/bash
# hardwire, as this run of hardwire learn was started. Written by hardwire learn for the demo's bash.
if [ "$1" = lab ] && [ "$2" = ssh ]; then
  host=$3; shift 3; [ "$1" = -- ] && shift
  case "$host" in
${hosts.join('\n')}
    *) echo "hardwire lab ssh: no host $host in the inventory" >&2; exit 1 ;;
  esac
fi
exec ${shJoin(['env', `HARDWIRE_STATE=${state}`, ...(cache ? [`HARDWIRE_CACHE=${cache}`] : []), ...cli])} "$@"${cliArgs.length ? ` ${shJoin([...cliArgs])}` : ''}
`;
}

/** The demo's bash: each line as typed, with kubectl first on PATH and KUBECONFIG set to `kubeconfig`. */
function shell(inv: Inventory, kubeconfig: string, cliArgs: readonly string[]): LearnEnv['sh'] {
  return async (lines) => {
    const cwd = mkdtempSync(join(tmpdir(), 'hardwire-learn-'));
    const bin = join(cwd, '.bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'etcdctl'), etcdctlShim(inv), { mode: 0o755 });
    writeFileSync(join(bin, 'hardwire'), hardwireShim(inv, cliArgs), { mode: 0o755 });
    try {
      const r = await run('bash', ['--noprofile', '--norc'], {
        step: 'learn',
        cwd,
        input: `exec 2>&1\n${script(lines)}kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; exit 0\n`,
        env: {
          PATH: `${dirname(kubectlPath())}:${bin}:/usr/local/bin:/usr/bin:/bin`,
          HOME: process.env.HOME ?? '/root',
          KUBECONFIG: kubeconfig,
        },
        timeoutMs: 600_000,
        tailOf: 'all',
      });
      return splitTyped(lines, r.stdout);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  };
}

/** An audit log besides the units': the debug apiserver's (learn --live), on one host. */
export interface AuditFile {
  host: string;
  file: string;
}

/** The audit log on every control-plane host, and the `also` files on theirs. */
function auditReader(inv: Inventory, ctx: WireContext, also: AuditFile[]): LearnEnv['audit'] {
  return async (needle) => {
    const events: AuditEvent[] = [];
    for (const h of inv.controlPlaneHosts) {
      const files = also.filter((a) => a.host === h.name).map((a) => a.file);
      const r = await session(ctx, h.name).exec(
        ['grep', '-h', '-F', '-r', '--', needle, AUDIT_LOG_DIR, ...files],
        { allowFail: true, timeoutMs: 30_000 },
      );
      for (const l of r.stdout.split('\n'))
        if (l.startsWith('{')) events.push(JSON.parse(l) as AuditEvent);
    }
    return events.sort((a, b) => a.stageTimestamp.localeCompare(b.stageTimestamp));
  };
}

/**
 * The same frame with the bash's kubectl (and so its kubectl proxy) sent to another apiserver, and
 * the checks reading that apiserver's audit log too: learn --live's debug instance.
 */
export function redirected(env: LearnEnv, kubeconfig: string, audit: AuditFile): LearnEnv {
  return {
    ...env,
    kubeconfig,
    sh: shell(env.inv, kubeconfig, env.cliArgs),
    audit: auditReader(env.inv, env.ctx, [audit]),
  };
}

export async function withLearnEnv<T>(
  inv: Inventory,
  stateDir: string,
  conn: Connection,
  log: Logger,
  fn: (env: LearnEnv) => Promise<T>,
  /** Options that reach the same cluster (--inventory, --state-dir, ...), for the demo's `hardwire`. */
  cliArgs: readonly string[] = [],
): Promise<T> {
  return withConnected(inv, stateDir, conn, log, async (ctx) => {
    const creds = adminCreds(ctx.clusterDir);
    const kubeconfig = adminKubeconfigPath(ctx.clusterDir);
    const env: LearnEnv = {
      inv,
      ctx,
      log,
      creds,
      kubeconfig,
      ns: LEARN_NS,
      cliArgs,
      sh: shell(inv, kubeconfig, cliArgs),
      async api(method, path, body, contentType) {
        const r = await kubeRequest(creds, method, path, {
          ...(body === undefined ? {} : { body: body as object }),
          ...(contentType ? { contentType } : {}),
          timeoutMs: 20_000,
        });
        let json: unknown;
        try {
          json = JSON.parse(r.body);
        } catch {
          json = r.body;
        }
        return { status: r.status, json: json as never };
      },
      audit: auditReader(inv, ctx, []),
      async etcdctl(args) {
        const h = inv.etcdHosts[0]!;
        const r = await session(ctx, h.name).exec(etcdctlArgv(inv, ...args), {
          timeoutMs: 30_000,
        });
        return r.stdout;
      },
    };
    return fn(env);
  });
}
