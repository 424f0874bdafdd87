import { act, group, topCommand, type Cli, type Run } from '../command.ts';
import {
  connection,
  hostOptions,
  options,
  stateDirFrom,
  type HostOpts,
  type InventoryOpts,
} from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { printJson } from '../../lib/log.ts';
import { InputError } from '../../lib/errors.ts';
import { clusterStateDir } from '../../core/pki/store.ts';
import { newContext } from '../../core/apply/context.ts';
import { runPhases } from '../../core/apply/phase.ts';
import { connectPhase } from '../../core/apply/phases/connect.ts';
import { checkHosts, formatCheck, problems, type CheckReport } from '../../core/certs/check.ts';
import { renewableNames } from '../../core/certs/catalog.ts';
import { caFingerprints, pushRenewed, renewOperatorCopies } from '../../core/certs/renew.ts';
import type { Inventory } from '../../core/inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import { DEFAULT_GATE_TIMEOUT_MS } from '../../lib/constants.ts';
import { certNames, wrapList } from '../help.ts';
import type { ReadSession } from '../../core/transport/index.ts';

const HELP = () => `
usage: hardwire certs check [--inventory FILE] [--state-dir DIR] [--accept-new-host-keys] [--quiet] [--json]
       hardwire certs renew <name>...|all [--restart] [--new-key] [--inventory FILE] [--state-dir DIR]
                            [--gate-timeout SECONDS] [--accept-new-host-keys] [--quiet] [--json]

check   reads the certificates actually installed on every host over SSH, including the client
        certs embedded in kubeconfigs (only the client-certificate-data line is read; private keys
        stay on the host), and prints them like "kubeadm certs check-expiration": CERTIFICATE, HOST,
        EXPIRES, RESIDUAL TIME, CERTIFICATE AUTHORITY, KEY ALGORITHM, FILE; then the CAs. EXPIRED, MISSING,
        NOT YET VALID, a cert not signed by the CA file on the same host and a key that is not
        cluster.keyAlgorithm (KEY ALGORITHM column) are shown plainly.
        Exit 1 when any of those is found.

renew   reissues leaf certificates from the existing CA in DIR/<cluster>/pki, keeping each cert's
        subject, SANs, usages and key (--new-key: a new key), then pushes only those files to the
        hosts, atomically, through wire's plan. The CA is never touched; its fingerprint is compared
        before and after. Without --restart, it prints exactly which components must restart and
        why (they read certs and kubeconfigs only at start) and leaves restart markers, so the next
        "hardwire wire" restarts them. With --restart, it restarts them like wire: etcd, then
        kube-apiserver, then controller-manager and scheduler, one host at a time, each followed by
        its gate; then every gate must be green. --gate-timeout: how long each gate waits, in
        seconds (default ${DEFAULT_GATE_TIMEOUT_MS / 1000}).
        Names (kubeadm's, from the certificate table; those of hosts' roles the inventory has):
        ${wrapList([...certNames(), 'or all'], '        ')}.

Without --inventory, the local lab is used.
`;

async function withSessions<T>(
  inv: Inventory,
  stateDir: string,
  log: Logger,
  acceptNew: boolean,
  fn: (sessions: Map<string, ReadSession>) => Promise<T>,
): Promise<T> {
  const ctx = newContext(
    inv,
    stateDir,
    clusterStateDir(stateDir, inv),
    { dryRun: false, acceptNewHostKeys: acceptNew, gateTimeoutMs: DEFAULT_GATE_TIMEOUT_MS },
    log,
  );
  let out: T | undefined;
  await runPhases(
    [
      connectPhase,
      {
        id: 'read-certs',
        title: 'Read certificates on every host',
        run: async (c) => {
          out = await fn(c.sessions);
        },
      },
    ],
    ctx,
  );
  return out as T;
}

export async function certsCheck(
  inv: Inventory,
  stateDir: string,
  log: Logger,
  acceptNewHostKeys = false,
): Promise<CheckReport> {
  return withSessions(inv, stateDir, log, acceptNewHostKeys, (sessions) =>
    checkHosts(inv, sessions),
  );
}

interface Opts extends InventoryOpts, HostOpts {
  json?: boolean;
}
interface RenewOpts extends Opts {
  restart?: boolean;
  newKey?: boolean;
}

export function declare(root: Cli): Cli {
  const certs = topCommand(
    root,
    'certs',
    'check expiry of the certs on the hosts (like kubeadm certs check-expiration); renew from the existing CA',
    HELP,
  )
    .addOption(options.inventory())
    .addOption(options.stateDir())
    .addOption(options.json());

  hostOptions(certs.command('check'), { gates: false }).action(
    act(async ({ opts, log }: Run<Opts>) => {
      const inv = await inventoryOrLab(opts, log, false);
      const report = await certsCheck(
        inv,
        stateDirFrom(opts),
        log,
        opts.acceptNewHostKeys === true,
      );
      const bad = problems(report);
      if (opts.json) printJson({ ok: bad.length === 0, ...report });
      else process.stdout.write(formatCheck(report));
      return bad.length === 0 ? 0 : 1;
    }),
  );

  const renewCmd = certs
    .command('renew')
    .argument('<name...>', 'pass a certificate name such as scheduler.conf, or all')
    .option('--restart', 'restart the components that read the renewed files, gated')
    .option('--new-key', 'generate a new key instead of keeping the current one');
  hostOptions(renewCmd, { gates: true }).action(
    act(async ({ opts, log }: Run<RenewOpts>, names: string[]) => renew(opts, log, names)),
  );

  return group(certs);
}

async function renew(opts: RenewOpts, log: Logger, names: string[]): Promise<number> {
  const stateDir = stateDirFrom(opts);
  const inv = await inventoryOrLab(opts, log, false);
  const known = renewableNames(inv);
  const chosen = names.includes('all') ? [...known.keys()] : names;
  for (const n of chosen)
    if (!known.has(n))
      throw new InputError(
        'name',
        `unknown certificate "${n}"; valid: ${[...known.keys()].join(', ')}, all`,
      );
  const leafIds = [...new Set(chosen.map((n) => known.get(n)!))];

  const before = caFingerprints(stateDir, inv).certs;
  log.step(`Renew ${chosen.join(', ')} from the existing CA`);
  const renewed = await renewOperatorCopies(stateDir, inv, leafIds, {
    newKey: opts.newKey === true,
    log,
  });
  const pushed = await pushRenewed(inv, stateDir, leafIds, {
    restart: opts.restart === true,
    ...connection(opts),
    log,
  });
  const after = caFingerprints(stateDir, inv).certs;
  const files = pushed.ctx.plan!.hosts.flatMap((h) =>
    h.changes.map((c) => ({ host: h.host, path: c.path })),
  );
  const report = {
    renewed: renewed.map((r) => ({ ...r, name: chosen.find((n) => known.get(n) === r.leafId) })),
    pushed: files,
    restarted: pushed.restarted,
    restartNeeded: pushed.pending.map((p) => ({
      ...p,
      why: `${p.component} reads ${p.reasons.map((r) => r.replace(/ (changed|missing)$/, '')).join(', ')} only at start`,
    })),
    caFingerprint: { before, after, unchanged: JSON.stringify(before) === JSON.stringify(after) },
  };
  if (opts.json) {
    printJson(report);
  } else {
    for (const f of files) process.stdout.write(`pushed    [${f.host}] ${f.path}\n`);
    for (const r of report.restarted) process.stdout.write(`restarted [${r.host}] ${r.unit}\n`);
    if (report.restartNeeded.length > 0) {
      process.stdout.write(
        'restart needed (markers left under /var/lib/hardwire/pending-restart; "hardwire wire" or "certs renew --restart" does it in order):\n',
      );
      for (const p of report.restartNeeded)
        process.stdout.write(`  [${p.host}] ${p.component}: ${p.why}\n`);
    } else if (!opts.restart) {
      process.stdout.write(
        'no restart needed: no running component reads the renewed files at start\n',
      );
    }
    process.stdout.write(
      `CA fingerprints unchanged: ${Object.entries(after)
        .map(([k, v]) => `${k} ${v.slice(0, 23)}...`)
        .join(', ')}\n`,
    );
  }
  return 0;
}
