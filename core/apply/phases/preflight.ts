// Reads every host before anything is rendered or written (kubeadm's preflight, core/preflight):
// the node models render from what it finds (cgroup version, own kernel or a container's), and a
// failing check stops the run here, before any host change.
import type { Phase } from '../phase.ts';
import { session } from '../context.ts';
import { readHost } from '../../preflight/read.ts';
import { checkHost, failureLines } from '../../preflight/checks.ts';
import { profileOf, saveProfile } from '../../preflight/profile.ts';
import { InputError } from '../../../lib/errors.ts';

export const preflightPhase: Phase = {
  id: 'preflight',
  title: 'Preflight: read every host (OS, cgroups, swap, sysctls, ports, clock, disk)',
  async run(ctx) {
    const readings = await Promise.all(ctx.inv.hosts.map((h) => readHost(session(ctx, h.name))));
    ctx.preflight = ctx.inv.hosts.flatMap((h, i) => checkHost(h, readings[i]!));
    for (const r of readings) {
      const p = profileOf(r);
      ctx.profiles.set(r.host, p);
      saveProfile(ctx.clusterDir, r.host, p);
    }
    for (const c of ctx.preflight.filter((x) => x.wireSets))
      ctx.log.info(`  [${c.host}] ${c.check}: ${c.value}; wire sets it`);
    const failed = failureLines(ctx.preflight);
    if (failed.length > 0) {
      const hosts = new Set(ctx.preflight.filter((c) => !c.ok).map((c) => c.host));
      throw new InputError(
        'preflight',
        `${failed.length} check(s) failed on ${[...hosts].join(', ')}; nothing was written on any host ("hardwire preflight --json" lists every check)`,
        failed,
      );
    }
  },
};
