// The frame `hardwire learn` runs an exercise in: the drills' connected context (one SSH session per
// host), the admin's credentials, a bash that runs a learner's lines as typed, and the two readers
// the checks use besides the API: the apiserver's audit log on every control-plane host, and etcdctl.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Inventory } from '../../core/inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import { run } from '../../lib/proc.ts';
import { adminCreds, adminKubeconfigPath } from '../../core/apply/creds.ts';
import { session } from '../../core/apply/context.ts';
import { kubeRequest } from '../../core/transport/kube-api.ts';
import { AUDIT_LOG_DIR } from '../../core/components/models/audit-policy.ts';
import { etcdctlArgv } from '../../core/gates/etcd.ts';
import { kubectlPath } from '../../core/components/binaries/cache.ts';
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

export async function withLearnEnv<T>(
  inv: Inventory,
  stateDir: string,
  conn: Connection,
  log: Logger,
  fn: (env: LearnEnv) => Promise<T>,
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
      async sh(lines) {
        const cwd = mkdtempSync(join(tmpdir(), 'hardwire-learn-'));
        try {
          const r = await run('bash', ['--noprofile', '--norc'], {
            step: 'learn',
            cwd,
            input: `exec 2>&1\n${script(lines)}kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; exit 0\n`,
            env: {
              PATH: `${dirname(kubectlPath())}:/usr/local/bin:/usr/bin:/bin`,
              HOME: process.env.HOME ?? '/root',
              KUBECONFIG: kubeconfig,
            },
            timeoutMs: 300_000,
            tailOf: 'all',
          });
          return splitTyped(lines, r.stdout);
        } finally {
          rmSync(cwd, { recursive: true, force: true });
        }
      },
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
      async audit(needle) {
        const events: AuditEvent[] = [];
        for (const h of inv.controlPlaneHosts) {
          const r = await session(ctx, h.name).exec(
            ['grep', '-h', '-F', '-r', '--', needle, AUDIT_LOG_DIR],
            { allowFail: true, timeoutMs: 30_000 },
          );
          for (const l of r.stdout.split('\n'))
            if (l.startsWith('{')) events.push(JSON.parse(l) as AuditEvent);
        }
        return events.sort((a, b) => a.stageTimestamp.localeCompare(b.stageTimestamp));
      },
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
