// Components that run as their own system user (etcd): the user exists, and owns its directories
// with their mode, before any file is pushed or any unit (re)started as that user. Read first through
// the read-only session; only what differs goes through Wet, so a second run changes nothing.
import type { Phase } from '../phase.ts';
import { session, type WireContext } from '../context.ts';
import type { Account } from '../../components/models/types.ts';
import type { AccountFacts } from '../../plan/types.ts';
import { StepError } from '../../../lib/errors.ts';
import { readAccounts } from '../facts.ts';

/**
 * Creates the account if missing, then gives it each directory it owns: one change at most. `known` is
 * what the read phase found; without it (after a restore moved the data dir) it is read now.
 */
export async function ensureAccount(
  ctx: WireContext,
  host: string,
  a: Account,
  known?: AccountFacts,
): Promise<void> {
  const want = (mode: number) => `${a.user}:${a.user} ${mode.toString(8)}`;
  known ??= (await readAccounts(session(ctx, host), [a])).get(a.user)!;
  const fix = a.owns.flatMap((d) =>
    known.owns.get(d.path) === want(d.mode) ? [] : [{ d, was: known.owns.get(d.path) }],
  );
  const steps = [
    ...(known.exists
      ? []
      : [
          {
            msg: `create system user and group ${a.user} (${a.why})`,
            argv: [
              'useradd',
              '--system',
              '--user-group',
              '--no-create-home',
              '--home-dir',
              a.owns[0]?.path ?? '/nonexistent',
              '--shell',
              '/usr/sbin/nologin',
              '--comment',
              `${a.user} (hardwire)`,
              a.user,
            ],
          },
        ]),
    // -R: a data dir made by root (an older wire, a restore) holds root-owned files the user must write.
    ...fix.map(({ d, was }) => ({
      msg: `${was === undefined ? 'create' : `own (was ${was})`} ${d.path} as ${want(d.mode)}`,
      argv: [
        'sh',
        '-c',
        'set -e; mkdir -p -- "$1"; chown -R -- "$2:$2" "$1"; chmod "$3" "$1"',
        'sh',
        d.path,
        a.user,
        d.mode.toString(8),
      ],
    })),
  ];
  await ctx.wet.runCommands(host, steps);
}

export const accountsPhase: Phase = {
  id: 'accounts',
  title: 'System users for components that do not run as root, owning their directories',
  async run(ctx) {
    const results = await Promise.allSettled(
      ctx.inv.hosts.map(async (h) => {
        for (const m of ctx.trees.get(h.name)?.models ?? [])
          if (m.account)
            await ensureAccount(
              ctx,
              h.name,
              m.account,
              ctx.facts.get(h.name)?.accounts?.get(m.account.user),
            );
      }),
    );
    const bad = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (bad)
      throw bad.reason instanceof StepError
        ? bad.reason
        : new StepError('accounts', String(bad.reason));
  },
};
