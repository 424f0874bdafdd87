// etcd's first boot under `flags prove` (harness/prove/first-boot.ts, others.ts), the parts that
// need no host: the plan of Wet steps and their undos, the default-route test, and how the steps
// run around the trace (a dry run lists every change; a failure midway undoes what was made, last
// first, and says so). The lab test (test/flags-prove.test.ts) runs the real thing.
import { describe, expect, it } from 'vitest';
import { Wet } from '../core/apply/wet.ts';
import type { Session } from '../core/transport/index.ts';
import type { Logger } from '../lib/log.ts';
import { ASIDE, firstBootPlan, hasDefaultRoute, ROUTE_LINK } from '../harness/prove/first-boot.ts';
import { withSteps, type PlanStep } from '../harness/prove/others.ts';

const quiet: Logger = { info: () => undefined, warn: () => undefined, step: () => undefined };
const plan = firstBootPlan({
  etcdHost: 'e1',
  active: [
    { host: 'c1', units: ['kube-apiserver.service', 'kube-scheduler.service'] },
    { host: 'c2', units: [] },
  ],
  defaultRouteSrc: '10.0.0.5',
});
const cmd = (s: { argv: string[] }) => s.argv.join(' ');

describe('firstBootPlan', () => {
  it('stops what uses etcd (only the units that run), then etcd, moves the data dir aside and makes an empty one, then the route', () => {
    expect(plan.map((s) => `${s.host}: ${cmd(s)}`)).toEqual([
      'c1: systemctl stop kube-scheduler.service',
      'c1: systemctl stop kube-apiserver.service',
      'e1: systemctl stop etcd.service',
      `e1: mv -T -- /var/lib/etcd ${ASIDE}`,
      'e1: install -d -m 0700 -o etcd -g etcd /var/lib/etcd',
      `e1: ip link add ${ROUTE_LINK} type bridge`,
      `e1: sh -c ip link set dev ${ROUTE_LINK} addrgenmode none && ip link set dev ${ROUTE_LINK} up && ip route add default dev ${ROUTE_LINK} src 10.0.0.5`,
    ]);
  });

  it('undoes each change in reverse: the route, the data dir (only if it was moved aside), etcd, then its users', () => {
    expect(
      plan.flatMap((s) => (s.undo ? [`${s.undo.host}: ${cmd(s.undo)}`] : [])).reverse(),
    ).toEqual([
      `e1: ip link del ${ROUTE_LINK}`,
      `e1: sh -c test -d ${ASIDE} && rm -rf -- /var/lib/etcd && mv -T -- ${ASIDE} /var/lib/etcd`,
      'e1: systemctl start etcd.service',
      'c1: systemctl start kube-apiserver.service',
      'c1: systemctl start kube-scheduler.service',
    ]);
  });

  it('adds no route where the host has one', () => {
    const without = firstBootPlan({ etcdHost: 'e1', active: [] });
    expect(without.map(cmd).some((c) => c.includes(ROUTE_LINK))).toBe(false);
  });
});

describe('hasDefaultRoute', () => {
  const head =
    'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT';
  it("reads a default route from /proc/net/route, and none from a lab host's table", () => {
    expect(
      hasDefaultRoute(`${head}\nhost0\t003AD50A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n`),
    ).toBe(false);
    expect(
      hasDefaultRoute(
        `${head}\neth0\t00000000\t0100000A\t0003\t0\t0\t0\t00000000\t0\t0\t0\nhost0\t003AD50A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n`,
      ),
    ).toBe(true);
    expect(hasDefaultRoute(`${head}\n`)).toBe(false);
  });
});

/** A host whose commands are recorded, and fail where `fails` says. */
function host(ran: string[], fails: (argv: string[]) => boolean): Session {
  return {
    exec: async (argv: string[]) => {
      ran.push(cmd({ argv }));
      return fails(argv)
        ? { code: 1, stdout: '', stderr: 'boom' }
        : { code: 0, stdout: '', stderr: '' };
    },
  } as unknown as Session;
}

function wet(ran: string[], fails: (argv: string[]) => boolean = () => false): Wet {
  const w = new Wet(false, quiet);
  for (const h of ['c1', 'c2', 'e1']) w.attach(h, host(ran, fails));
  return w;
}

describe('withSteps', () => {
  it('a dry run lists every change, the trace and every undo, in order, and makes none', async () => {
    const w = new Wet(true, quiet);
    await withSteps(w, plan, () => w.run('e1', 'trace etcd', async () => 'traced'));
    expect(w.intents.map((i) => `${i.host}: ${i.msg}`)).toEqual([
      ...plan.map((s) => `${s.host}: ${s.msg}`),
      'e1: trace etcd',
      ...plan.flatMap((s) => (s.undo ? [`${s.undo.host}: ${s.undo.msg}`] : [])).reverse(),
    ]);
  });

  it('a step that fails midway: what was made is undone, last first, and the error says what happened', async () => {
    const ran: string[] = [];
    const w = wet(ran, (argv) => argv[0] === 'install');
    let traced = false;
    const err = await withSteps(w, plan, async () => {
      traced = true;
    }).then(
      () => new Error('no error'),
      (e: unknown) => e as Error,
    );
    expect(traced).toBe(false);
    expect(ran.slice(5)).toEqual([
      cmd(plan[3]!.undo!),
      cmd(plan[2]!.undo!),
      cmd(plan[1]!.undo!),
      cmd(plan[0]!.undo!),
    ]);
    expect(err.message).toMatch(
      /^create an empty \/var\/lib\/etcd .*: install .*: boom \(undone: \[e1\] put \/var\/lib\/etcd back .*; \[e1\] start etcd.service again/,
    );
  });

  it('a trace that fails: everything is undone and its error is kept; an undo that fails too is named, and the others still run', async () => {
    const ran: string[] = [];
    const w = wet(ran, (argv) => argv.join(' ') === 'systemctl start etcd.service');
    const err = await withSteps(w, plan, () => Promise.reject(new Error('gate timed out'))).catch(
      (e: unknown) => e as Error,
    );
    expect(ran.slice(plan.length)).toEqual(
      plan.flatMap((s: PlanStep) => (s.undo ? [cmd(s.undo)] : [])).reverse(),
    );
    expect(err.message).toMatch(
      /^gate timed out \(undone: .*; NOT undone \(fix by hand\): start etcd.service again on its own data dir: systemctl start etcd.service: boom\)$/,
    );
  });

  it('all well: the result, every change undone', async () => {
    const ran: string[] = [];
    expect(await withSteps(wet(ran), plan, async () => 42)).toBe(42);
    expect(ran).toHaveLength(plan.length + plan.filter((s) => s.undo).length);
  });
});
