import type { Phase } from '../phase.ts';
import { readFileSync } from 'node:fs';
import { session, type WireContext } from '../context.ts';
import { COMPONENT_NAMES, componentsOn } from '../../components/registry/index.ts';
import {
  ETCD_DATA_DIR,
  etcdModel,
  initialCluster,
  initialClusterToken,
  peerUrl,
} from '../../components/models/etcd.ts';
import { ensureAccount } from './accounts.ts';
import { BIN_DIR, HOST_STATE_DIR } from '../../../lib/constants.ts';
import { snapshotStatus } from '../etcd-snapshot.ts';
import { StepError } from '../../../lib/errors.ts';
import { unitOf } from '../../../lib/unit.ts';

const RESTORE_DB = `${HOST_STATE_DIR}/restore.db`;
const ETCDUTL = `${BIN_DIR}/etcdutl`;

async function stopAll(ctx: WireContext): Promise<void> {
  // Apiservers and controllers first, so nothing writes while etcd goes away.
  for (const c of [...COMPONENT_NAMES].reverse()) {
    await Promise.all(
      ctx.inv.hosts
        .filter((h) => componentsOn(h).includes(c))
        .map((h) =>
          ctx.wet.run(h.name, `systemctl stop ${unitOf(c)}`, (w) =>
            w.exec(['systemctl', 'stop', unitOf(c)], { timeoutMs: 120_000 }),
          ),
        ),
    );
  }
}

async function restoreMember(ctx: WireContext, name: string, data: Buffer): Promise<void> {
  const h = ctx.inv.etcdHosts.find((x) => x.name === name)!;
  const aside = `${ETCD_DATA_DIR}.before-restore-${ctx.runId}`;
  await ctx.wet.run(name, `copy snapshot to ${RESTORE_DB}`, (s) =>
    s.writeFileAtomic(RESTORE_DB, data, { mode: 0o600 }),
  );
  await ctx.wet.run(
    name,
    `move ${ETCD_DATA_DIR} aside to ${aside} (kept, never deleted here)`,
    (s) =>
      s.exec(['sh', '-c', 'if [ -e "$1" ]; then mv -- "$1" "$2"; fi', 'sh', ETCD_DATA_DIR, aside]),
  );
  await ctx.wet.run(name, `etcdutl snapshot restore into ${ETCD_DATA_DIR} as member ${name}`, (s) =>
    s.exec(
      [
        ETCDUTL,
        'snapshot',
        'restore',
        RESTORE_DB,
        `--name=${name}`,
        `--initial-cluster=${initialCluster(ctx.inv)}`,
        `--initial-cluster-token=${initialClusterToken(ctx.inv)}`,
        `--initial-advertise-peer-urls=${peerUrl(h.address)}`,
        `--data-dir=${ETCD_DATA_DIR}`,
      ],
      { timeoutMs: 120_000 },
    ),
  );
  await ctx.wet.run(name, `remove ${RESTORE_DB}`, (s) => s.exec(['rm', '-f', '--', RESTORE_DB]));
  // etcdutl ran as root: hand the new data dir to the user etcd runs as.
  const account = etcdModel({ inv: ctx.inv, host: h }).account;
  if (account) await ensureAccount(ctx, name, account);
}

/** Stops everything, restores every member from one snapshot, then plans a start of everything. */
export function restorePhase(file: string): Phase {
  return {
    id: 'restore',
    title: `Restore etcd from ${file}`,
    async run(ctx) {
      const st = await snapshotStatus(file);
      ctx.log.info(`  snapshot: revision ${st.revision}, ${st.totalKey} keys, hash ${st.hash}`);
      const data = readFileSync(file);
      // Check every member can restore before anything is stopped.
      await Promise.all(
        ctx.inv.etcdHosts.map(async (h) => {
          const r = await session(ctx, h.name).exec(['test', '-x', ETCDUTL], { allowFail: true });
          if (r.code !== 0)
            throw new StepError(
              'restore preflight',
              `${ETCDUTL} is missing; run "hardwire wire" first (it installs etcdutl); nothing was stopped`,
              { host: h.name },
            );
        }),
      );
      await stopAll(ctx);
      await Promise.all(ctx.inv.etcdHosts.map((h) => restoreMember(ctx, h.name, data)));
      ctx.plan = {
        noop: false,
        hosts: ctx.inv.hosts.map((h) => ({
          host: h.name,
          changes: [],
          daemonReload: false,
          units: componentsOn(h).map((component) => ({
            component,
            action: 'start' as const,
            reasons: ['restored from snapshot'],
          })),
        })),
      };
    },
  };
}
