import { resolve } from 'node:path';
import { existsSync } from 'node:fs';
import type { Command } from '../command.ts';
import { parse } from '../args.ts';
import { stateDirFrom } from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { newContext, session } from '../../apply/context.ts';
import { runPhases } from '../../apply/phase.ts';
import { connectPhase } from '../../apply/phases/connect.ts';
import { restorePhase } from '../../apply/phases/restore.ts';
import { START_PHASES } from '../../apply/phases/start.ts';
import { clusterStateDir } from '../../pki/store.ts';
import { listSnapshots, saveSnapshot } from '../../etcd/snapshot.ts';
import { checkEtcd } from '../../gates/etcd.ts';
import { printJson } from '../../lib/log.ts';
import { InputError } from '../../lib/errors.ts';

export const command: Command = {
  name: 'etcd',
  summary: 'etcd snapshots: save (verified), list, restore (all members, then a gated restart)',
  help: `
usage: hardwire etcd snapshot save    [--inventory FILE] [--state-dir DIR] [--json]
       hardwire etcd snapshot list    [--inventory FILE] [--state-dir DIR] [--json]
       hardwire etcd snapshot restore FILE [--inventory FILE] [--state-dir DIR] [--dry-run] [--json]

save: etcdctl snapshot save on a healthy member (mTLS, healthcheck-client cert), copied to
DIR/<cluster>/snapshots/<run-id>.db (0600) and verified with etcdutl snapshot status.
wire takes one the same way before any step that restarts or reconfigures etcd.

restore, step by step (what it runs, in order):
  1. verify FILE with etcdutl snapshot status
  2. stop kube-scheduler, kube-controller-manager, kube-apiserver, then etcd, on every host
  3. on every etcd member: copy FILE, move /var/lib/etcd aside to /var/lib/etcd.before-restore-<run-id>
     (kept), etcdutl snapshot restore FILE --name <member> --initial-cluster <all members>
     --initial-cluster-token hardwire-<cluster> --initial-advertise-peer-urls https://<addr>:2380
  4. start etcd everywhere and wait for health + member list, then the apiservers (/readyz), then
     the controller-manager and scheduler (Leases renewing)
`,
  async run({ argv, log }) {
    const { values, positionals } = parse(argv, { inventory: { type: 'string', short: 'i' }, 'state-dir': { type: 'string' }, json: { type: 'boolean' }, 'dry-run': { type: 'boolean' } });
    const [noun, verb, file] = positionals;
    if (noun !== 'snapshot' || !['save', 'list', 'restore'].includes(verb ?? '')) throw new InputError('command', 'use "hardwire etcd snapshot save|list|restore" (see --help)');
    const inv = await inventoryOrLab(values, log, false);
    const stateDir = stateDirFrom(values);
    const clusterDir = clusterStateDir(stateDir, inv);
    if (verb === 'list') {
      const list = listSnapshots(clusterDir);
      if (values.json) printJson({ snapshots: list });
      else for (const s of list) process.stdout.write(`${s.name}  ${s.sizeBytes} bytes  ${s.mtime}  ${s.file}\n`);
      return 0;
    }
    if (verb === 'restore' && (!file || !existsSync(file))) throw new InputError('FILE', `${file ? `${file} does not exist` : 'missing'}; pass a snapshot from "hardwire etcd snapshot list"`);
    const ctx = newContext(inv, stateDir, clusterDir, { dryRun: values['dry-run'] === true, acceptNewHostKeys: false, gateTimeoutMs: 120_000 }, log);
    if (verb === 'save') {
      let out: unknown;
      await runPhases([connectPhase, { id: 'save', title: 'Snapshot etcd', async run(c) {
        // The first member that reports a healthy cluster gives the snapshot.
        for (const h of c.inv.etcdHosts) {
          try { await checkEtcd(c.inv, session(c, h.name)); } catch { continue; }
          out = await saveSnapshot(c.inv, h, session(c, h.name), c.clusterDir, `${c.runId}-manual`);
          return;
        }
        throw new InputError('etcd', 'no healthy etcd member to take a snapshot from; check "hardwire verify"');
      } }], ctx);
      if (values.json) printJson(out);
      else process.stdout.write(`${(out as { file: string }).file}\n`);
      return 0;
    }
    await runPhases([connectPhase, restorePhase(resolve(file!)), ...START_PHASES], ctx);
    if (values.json) printJson({ restoredFrom: resolve(file!), dryRun: ctx.opts.dryRun, actions: ctx.wet.intents, durationsMs: ctx.durationsMs });
    return 0;
  },
};
