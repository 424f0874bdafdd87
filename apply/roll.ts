// Starting and restarting one component across hosts, then its gate from the registry. Fresh starts
// go in parallel (etcd needs its peers to form quorum); restarts of running members go one host at
// a time, each followed by its gate, so quorum and at least one ready apiserver survive the roll.
// A dry run records every start and restart it would make through Wet, and gates nothing.
import { COMPONENTS, specOf, type ComponentName } from '../components/registry/index.ts';
import { hostsFor } from '../plan/build.ts';
import type { WireContext } from './context.ts';
import { PENDING_DIR } from './facts.ts';

async function clearMark(ctx: WireContext, host: string, component: ComponentName): Promise<void> {
  await ctx.wet.run(host, `clear ${component} restart mark`, (s) => s.exec(['rm', '-f', `${PENDING_DIR}/${component}`]));
}

/** `systemctl start` (restart if it was activating), without waiting: reset-failed first, in the same round trip. */
async function startUnit(ctx: WireContext, host: string, component: ComponentName, note = '', done?: () => void): Promise<void> {
  const unit = `${component}.service`;
  // A unit still activating (an etcd member that never reported ready, a unit between two of
  // systemd's attempts) would be left by `start` to TimeoutStartSec or RestartSec on the old
  // files: restart it instead, which for a stopped process is a start.
  const activating = ctx.facts.get(host)?.units.get(component)?.activeState === 'activating';
  await ctx.wet.run(host, `${activating ? `systemctl restart ${unit} (it was activating)` : `systemctl start ${unit}`}${note}`, async (s) => {
    // --no-block: etcd is Type=notify and reports ready only once quorum forms, which needs the others.
    await s.exec(['sh', '-c', `systemctl reset-failed -- "$1" 2>/dev/null; exec systemctl ${activating ? 'restart' : 'start'} --no-block -- "$1"`, 'sh', unit]);
    done?.(); // inside Wet: a dry run records the intent and nothing else
  });
}

/**
 * Fresh starts of components queued behind this one (registry `queueFreshStart`): on each host where
 * this one and they both start fresh, issued now, so systemd's After= starts them when it is ready.
 */
async function queueFollowers(ctx: WireContext, component: ComponentName, started: string[]): Promise<void> {
  const followers = COMPONENTS.filter((c) => 'queueFreshStart' in c && c.queueFreshStart && (c.after as readonly string[]).includes(component));
  const plan = ctx.plan!;
  await Promise.all(followers.flatMap((f) => hostsFor(plan, f.name, 'start').filter((h) => started.includes(h)).map((h) => startUnit(ctx, h, f.name, ` (queued by After=${component}.service)`))));
}

export async function roll(ctx: WireContext, component: ComponentName): Promise<void> {
  const plan = ctx.plan!;
  const unit = `${component}.service`;
  const spec = specOf(component);
  const gate = (hosts: string[], armed?: unknown) => (ctx.opts.dryRun ? Promise.resolve() : spec.gate.wait(ctx, hosts, armed));
  const starts = hostsFor(plan, component, 'start');
  const restarts = hostsFor(plan, component, 'restart');
  if (starts.length > 0) {
    // Nothing of it runs on these hosts yet: what the gate reads now, a change after it proves the new instances.
    const armed = ctx.opts.dryRun ? undefined : await spec.gate.arm?.(ctx);
    await Promise.all(starts.map((h) => startUnit(ctx, h, component, '', () => ctx.restarted.push({ host: h, unit, action: 'start' }))));
    await queueFollowers(ctx, component, starts);
    await gate(starts, armed);
    // A fresh start loads the new files too: a restart an interrupted run left pending is done.
    await Promise.all(starts.filter((h) => ctx.facts.get(h)?.pendingRestart?.has(component)).map((h) => clearMark(ctx, h, component)));
  }
  for (const h of restarts) {
    await ctx.wet.run(h, `systemctl restart ${unit}`, async (s) => {
      // Blocking, so the gate below cannot be answered by the old process.
      await s.exec(['systemctl', 'restart', unit], { timeoutMs: 150_000 });
      ctx.restarted.push({ host: h, unit, action: 'restart' });
    });
    await gate([h]);
    await clearMark(ctx, h, component);
  }
  if (starts.length === 0 && restarts.length === 0) await gate([]);
}
