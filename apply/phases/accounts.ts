// Components that run as their own system user (etcd): the user exists, and owns its directories
// with their mode, before any file is pushed or any unit (re)started as that user. Read first through
// the read-only session; only what differs goes through Wet, so a second run changes nothing.
import type { Phase } from '../phase.ts';
import { session, type WireContext } from '../context.ts';
import type { Account } from '../../components/models/types.ts';
import { StepError } from '../../lib/errors.ts';

/** One line of `stat -c '%U:%G %a'` for a path, or undefined when it does not exist. */
async function ownerAndMode(ctx: WireContext, host: string, path: string): Promise<string | undefined> {
  const r = await session(ctx, host).exec(['stat', '-c', '%U:%G %a', '--', path], { allowFail: true });
  return r.code === 0 ? r.stdout.trim() : undefined;
}

async function userExists(ctx: WireContext, host: string, user: string): Promise<boolean> {
  const r = await session(ctx, host).exec(['grep', '-q', `^${user}:`, '/etc/passwd'], { allowFail: true });
  return r.code === 0;
}

/** Creates the account if missing, then gives it each directory it owns: reads at once, then one change at most. */
export async function ensureAccount(ctx: WireContext, host: string, a: Account): Promise<void> {
  const want = (mode: number) => `${a.user}:${a.user} ${mode.toString(8)}`;
  const [exists, ...have] = await Promise.all([userExists(ctx, host, a.user), ...a.owns.map((d) => ownerAndMode(ctx, host, d.path))]);
  const fix = a.owns.flatMap((d, i) => (have[i] === want(d.mode) ? [] : [{ d, was: have[i] as string | undefined }]));
  const steps = [
    ...(exists ? [] : [{
      msg: `create system user and group ${a.user} (${a.why})`,
      argv: ['useradd', '--system', '--user-group', '--no-create-home', '--home-dir', a.owns[0]?.path ?? '/nonexistent', '--shell', '/usr/sbin/nologin', '--comment', `${a.user} (hardwire)`, a.user],
    }]),
    // -R: a data dir made by root (an older wire, a restore) holds root-owned files the user must write.
    ...fix.map(({ d, was }) => ({
      msg: `${was === undefined ? 'create' : `own (was ${was})`} ${d.path} as ${want(d.mode)}`,
      argv: ['sh', '-c', 'set -e; mkdir -p -- "$1"; chown -R -- "$2:$2" "$1"; chmod "$3" "$1"', 'sh', d.path, a.user, d.mode.toString(8)],
    })),
  ];
  await ctx.wet.runCommands(host, steps);
}

export const accountsPhase: Phase = {
  id: 'accounts',
  title: 'System users for components that do not run as root, owning their directories',
  async run(ctx) {
    const results = await Promise.allSettled(ctx.inv.hosts.map(async (h) => {
      for (const m of ctx.trees.get(h.name)?.models ?? []) if (m.account) await ensureAccount(ctx, h.name, m.account);
    }));
    const bad = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (bad) throw bad.reason instanceof StepError ? bad.reason : new StepError('accounts', String(bad.reason));
  },
};
