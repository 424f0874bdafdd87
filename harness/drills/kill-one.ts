// Module 3.6, "kill one process", hardwire's half: SIGKILL kube-apiserver on one host, sample every
// component's health once a second (etcd, each /readyz, the Leases, each unit), and report what
// went down, for how long, and who brought it back (systemd's NRestarts and ExecMainStartTimestamp).
// The k0s half (`--plane k0s`: SIGKILL the k0s controller, whose supervisor runs the other
// components) is drills/kill-k0s.ts, with its own probe list for drills/sampler.ts.
import { COMPONENT_NAMES, LEASES, componentsOn } from '../../core/components/registry/index.ts';
import type { Host, Inventory } from '../../core/inventory/load.ts';
import { InputError } from '../../lib/errors.ts';
import { APISERVER_PORT } from '../../lib/constants.ts';
import { kubectl } from './kubectl.ts';
import {
  blastRadius,
  etcdHealth,
  leaseAlive,
  readyzOn,
  unitState,
  type UnitState,
} from './probes.ts';
import { outages, sample, type Probe } from './sampler.ts';
import type { RecoveryStep } from './report.ts';
import type { DrillDef, DrillEnv } from './runner.ts';
import { unitOf } from '../../lib/unit.ts';

export const K0S_HALF =
  'The k0s half, `hardwire drill kill-one --plane k0s`, SIGKILLs the k0s controller process on a fresh k0s lab and samples the same way.';
const UNIT = 'kube-apiserver';

/** The hardwire plane's probes: etcd, every /readyz, every Lease, every unit on every host. */
export function hardwireProbes(env: DrillEnv): Probe[] {
  const units: Probe[] = env.inv.hosts.flatMap((h) =>
    componentsOn(h).map((c) => ({
      name: `${unitOf(c)} on ${h.name}`,
      component: c,
      host: h.name,
      check: async () => {
        const u = await unitState(env.session(h.name), unitOf(c));
        return {
          ok: u.activeState === 'active',
          detail: `${u.activeState}, NRestarts ${u.nRestarts}`,
        };
      },
    })),
  );
  return [
    { name: 'etcd health', component: 'etcd', check: () => etcdHealth(env) },
    ...env.inv.controlPlaneHosts.map((h) => ({
      name: `/readyz on ${h.name}`,
      component: 'kube-apiserver',
      host: h.name,
      check: () => readyzOn(env, h.address),
    })),
    ...LEASES.map((l) => ({
      name: `Lease ${l.lease}`,
      component: l.component,
      check: () => leaseAlive(env, l.lease),
    })),
    ...units,
  ];
}

type States = Map<string, UnitState>;
async function states(env: DrillEnv): Promise<States> {
  const all = await Promise.all(
    env.inv.hosts.flatMap((h) =>
      componentsOn(h).map(
        async (c) =>
          [`${unitOf(c)} on ${h.name}`, await unitState(env.session(h.name), unitOf(c))] as const,
      ),
    ),
  );
  return new Map(all);
}

/** Who started each restarted unit: systemd counts its own restarts in NRestarts. */
export function whoBroughtBack(before: States, after: States): { unit: string; by: string }[] {
  return [...after].flatMap(([unit, a]) => {
    const b = before.get(unit);
    if (!b || a.execMainStart === b.execMainStart) return [];
    const n = a.nRestarts - b.nRestarts;
    return [
      {
        unit,
        by:
          a.activeState !== 'active'
            ? 'nothing (still down)'
            : n > 0
              ? `systemd (Restart=on-failure, NRestarts ${b.nRestarts} -> ${a.nRestarts}), process started ${a.execMainStart}`
              : `not systemd's Restart= (NRestarts unchanged): started ${a.execMainStart}`,
      },
    ];
  });
}

export function killOneDrill(hostName?: string): DrillDef {
  let before: States = new Map();
  let probes: Probe[] = [];
  const pick = (inv: Inventory): Host | undefined =>
    hostName ? inv.controlPlaneHosts.find((x) => x.name === hostName) : inv.controlPlaneHosts[0];
  const target = (env: DrillEnv): Host => pick(env.inv)!;
  return {
    validate(inv) {
      if (!pick(inv))
        throw new InputError(
          '--host',
          `"${hostName}" is not a control-plane host of this inventory; use one of ${inv.controlPlaneHosts.map((x) => x.name).join(', ')}`,
        );
    },
    name: 'kill-one',
    title: `Kill one process (module 3.6, hardwire half): SIGKILL ${UNIT}`,
    whoLogs: `systemd (PID 1) logs the kill in the unit's journal ("Main process exited, code=killed, status=9/KILL"): systemd is not a Go module, so that line has no source citation here. ${K0S_HALF}`,
    capture: {
      label: 'the kill, as systemd logs it',
      units: [UNIT],
      pattern: 'status=9/KILL',
      onBrokenHosts: true,
    },
    also: [
      {
        label: 'the controllers on that host lose their apiserver',
        units: ['kube-controller-manager', 'kube-scheduler'],
        pattern: 'connection refused',
        onBrokenHosts: true,
      },
    ],
    async prepare(env) {
      before = await states(env);
      probes = hardwireProbes(env);
    },
    async break(env) {
      const h = target(env);
      const at = Date.now();
      await env.ctx.wet.run(
        h.name,
        `systemctl kill --kill-whom=main --signal=SIGKILL ${unitOf(UNIT)}`,
        (w) =>
          w.exec(['systemctl', 'kill', '--kill-whom=main', '--signal=SIGKILL', unitOf(UNIT)], {
            timeoutMs: 30_000,
          }),
      );
      return {
        hosts: [h.name],
        action: `SIGKILL the main process of ${unitOf(UNIT)} on ${h.name} (pid ${before.get(`${unitOf(UNIT)} on ${h.name}`)?.mainPid ?? '?'})`,
        at,
      };
    },
    async during(_env, b) {
      const series = await sample(probes, { intervalMs: 1000, maxMs: 150_000, settleSamples: 5 });
      const down = outages(probes, series);
      // Everything healthy again, from the kill: the figure to compare with k0s's supervisor.
      const allBackMs = down.every((o) => o.upAt)
        ? Math.max(0, ...down.map((o) => Date.parse(o.upAt!) - b.at))
        : null;
      const samples = [...series.values()][0]?.length ?? 0;
      const md = [
        '## Health, sampled once a second',
        '',
        `${samples} samples of ${probes.length} probes (${probes.map((p) => p.name).join(', ')}).`,
        '',
        '| went down | component | host | down at | back at | down for |',
        '|---|---|---|---|---|---|',
        ...down.map(
          (o) =>
            `| ${o.probe} | ${o.component} | ${o.host ?? '-'} | ${o.downAt} | ${o.upAt ?? 'still down'} | ${o.downMs === null ? '-' : `${(o.downMs / 1000).toFixed(0)} s`} |`,
        ),
        ...(down.length ? [] : ['| (nothing) | | | | | |']),
        '',
        `Every probe ok again ${allBackMs === null ? 'never (within the sampling)' : `${(allBackMs / 1000).toFixed(1)} s after the kill`}.`,
        '',
        K0S_HALF,
        '',
      ];
      return {
        detail: {
          allBackMs,
          samples,
          probes: probes.map((p) => p.name),
          outages: down,
          components: COMPONENT_NAMES,
        },
        md,
      };
    },
    symptom: async (env, b) => {
      const h = env.inv.controlPlaneHosts.find((x) => x.name === b.hosts[0])!;
      const r = await kubectl(env.adminKubeconfig, [
        '--server',
        `https://${h.address}:${APISERVER_PORT}`,
        'get',
        '--raw',
        '/readyz',
      ]);
      return r.code !== 0 ? r : undefined;
    },
    blastRadius: (env) => blastRadius(env),
    async recover(env, b) {
      const after = await states(env);
      const back = whoBroughtBack(before, after);
      const steps: RecoveryStep[] = back.map((x) => ({
        step: `${x.unit}: brought back by ${x.by}`,
        why: 'read from systemctl show (NRestarts, ExecMainStartTimestamp)',
        at: new Date().toISOString(),
      }));
      for (const [unit, s] of after) {
        if (s.activeState === 'active') continue;
        const [name, , host] = unit.split(' ');
        steps.push({
          step: `systemctl start ${name} on ${host}`,
          why: 'nothing brought it back',
          at: new Date().toISOString(),
        });
        await env.ctx.wet.run(host!, `systemctl start ${name}`, (w) =>
          w.exec(['systemctl', 'start', name!], { timeoutMs: 180_000 }),
        );
      }
      if (steps.length === 0)
        steps.push({
          step: `nothing restarted ${UNIT} on ${b.hosts[0]}`,
          why: 'its ExecMainStartTimestamp did not change',
          at: new Date().toISOString(),
        });
      const md = ['## Who brought them back', '', ...back.map((x) => `- ${x.unit}: ${x.by}`), ''];
      return { steps, wets: [], extra: { detail: { whoBroughtBack: back }, md } };
    },
  };
}
