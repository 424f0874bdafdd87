import type { Phase } from '../phase.ts';
import { roll } from '../roll.ts';
import { adminCreds } from '../creds.ts';
import { apiserverGate } from '../../gates/apiserver.ts';

export const apiserverPhase: Phase = {
  id: 'kube-apiserver',
  title: 'Start kube-apiserver and wait for /livez and /readyz',
  shouldRun: (ctx) => !ctx.opts.dryRun,
  async run(ctx) {
    const creds = adminCreds(ctx.clusterDir);
    await roll(ctx, 'kube-apiserver', async (hosts) => {
      const targets = ctx.inv.controlPlaneHosts.filter((h) => hosts.length === 0 || hosts.includes(h.name));
      await Promise.all(targets.map((h) => apiserverGate(creds, h, ctx.sessions.get(h.name), ctx.opts.gateTimeoutMs)));
      ctx.log.info(`  ready: ${targets.map((h) => h.name).join(', ')}`);
    });
  },
};
