// Starting and restarting one component across hosts, then its gate from the registry. Fresh starts
// go in parallel (etcd needs its peers to form quorum); restarts of running members go one host at
// a time, each followed by its gate, so quorum and at least one ready apiserver survive the roll.
// A dry run records every start and restart it would make through Wet, and gates nothing.
import {
  COMPONENT_NAMES,
  queuedBehind,
  specOf,
  type ComponentName,
} from '../components/registry/index.ts';
import { hostsFor } from '../plan/build.ts';
import type { WireContext } from './context.ts';
import { PENDING_DIR } from './facts.ts';
import { unitOf } from '../../lib/unit.ts';

async function clearMark(ctx: WireContext, host: string, component: ComponentName): Promise<void> {
  await ctx.wet.run(host, `clear ${component} restart mark`, (s) =>
    s.exec(['rm', '-f', `${PENDING_DIR}/${component}`]),
  );
}

/** `systemctl start` (restart if it was activating), without waiting: reset-failed first, in the same round trip. */
async function startUnit(
  ctx: WireContext,
  host: string,
  component: ComponentName,
  done: () => void,
): Promise<void> {
  const unit = unitOf(component);
  // A unit still activating (an etcd member that never reported ready, a unit between two of
  // systemd's attempts) would be left by `start` to TimeoutStartSec or RestartSec on the old
  // files: restart it instead, which for a stopped process is a start.
  const activating = ctx.facts.get(host)?.units.get(component)?.activeState === 'activating';
  await ctx.wet.run(
    host,
    activating ? `systemctl restart ${unit} (it was activating)` : `systemctl start ${unit}`,
    async (s) => {
      // --no-block: etcd is Type=notify and reports ready only once quorum forms, which needs the others.
      await s.exec([
        'sh',
        '-c',
        `systemctl reset-failed -- "$1" 2>/dev/null; exec systemctl ${activating ? 'restart' : 'start'} --no-block -- "$1"`,
        'sh',
        unit,
      ]);
      done(); // inside Wet: a dry run records the intent and nothing else
    },
  );
}

/** Hosts where both start fresh: there `follower`'s start is queued behind `leader`'s (registry `queueFreshStart`). */
function startingWith(ctx: WireContext, follower: ComponentName, leader: ComponentName): string[] {
  const leaders = hostsFor(ctx.plan!, leader, 'start');
  return hostsFor(ctx.plan!, follower, 'start').filter((h) => leaders.includes(h));
}

/** Hosts whose fresh start of `component` an earlier stage already queued. */
function queuedHosts(ctx: WireContext, component: ComponentName): string[] {
  return [
    ...new Set(
      COMPONENT_NAMES.filter((c) => queuedBehind(c).includes(component)).flatMap((c) =>
        startingWith(ctx, component, c),
      ),
    ),
  ];
}

/** The fresh starts queued behind this component's, issued now: systemd's After= starts each when this one is ready. */
async function queueFollowers(ctx: WireContext, component: ComponentName): Promise<void> {
  await Promise.all(
    queuedBehind(component).map(async (f) => {
      const hosts = startingWith(ctx, f, component);
      if (hosts.length === 0) return;
      ctx.log.info(
        `  ${f} queued behind ${component} on ${hosts.join(', ')} (After=${unitOf(component)}: systemd starts it when ${component} is ready)`,
      );
      await Promise.all(
        hosts.map((h) =>
          startUnit(ctx, h, f, () =>
            ctx.restarted.push({ host: h, unit: unitOf(f), action: 'start' }),
          ),
        ),
      );
    }),
  );
}

export async function roll(ctx: WireContext, component: ComponentName): Promise<void> {
  const plan = ctx.plan!;
  const unit = unitOf(component);
  const spec = specOf(component);
  const gate = (hosts: string[], armed?: unknown) =>
    ctx.opts.dryRun ? Promise.resolve() : spec.gate.wait(ctx, hosts, armed);
  const starts = hostsFor(plan, component, 'start');
  const restarts = hostsFor(plan, component, 'restart');
  if (starts.length > 0) {
    // Nothing of it runs on these hosts yet: what the gate reads now, a change after it proves the new instances.
    const armed = ctx.opts.dryRun ? undefined : await spec.gate.arm?.(ctx);
    // Hosts where an earlier stage queued this start already need only the gate.
    const queued = queuedHosts(ctx, component);
    await Promise.all(
      starts
        .filter((h) => !queued.includes(h))
        .map((h) =>
          startUnit(ctx, h, component, () =>
            ctx.restarted.push({ host: h, unit, action: 'start' }),
          ),
        ),
    );
    await queueFollowers(ctx, component);
    await gate(starts, armed);
    // A fresh start loads the new files too: a restart an interrupted run left pending is done.
    await Promise.all(
      starts
        .filter((h) => ctx.facts.get(h)?.pendingRestart?.has(component))
        .map((h) => clearMark(ctx, h, component)),
    );
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
