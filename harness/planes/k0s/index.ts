// The k0s plane: the real k0s, built without embedded binaries and given hardwire's v1.36.3
// Kubernetes binaries plus the etcd and konnectivity-server k0s pins, run with its default
// components on fresh lab hosts. One lab of four: node1 is a single controller; node2 starts an HA
// plane that node3 and node4 join with `k0s token create --role=controller`. The flag and cert
// columns come from node2 (three etcd members, like hardwire's lab); what changes between single
// and HA is reported separately. A worker joins a controller of its own on a second lab
// (worker-lab.ts): the node column. Every fact is read from the running hosts: /proc, the PKI, k0s.
import { join } from 'node:path';
import {
  ensureAll,
  ensureBinary,
  type EnsuredBinary,
} from '../../../core/components/binaries/index.ts';
import { cacheDir } from '../../../lib/paths.ts';
import { StepError } from '../../../lib/errors.ts';
import type { Session } from '../../../core/transport/index.ts';
import type {
  CollectContext,
  Component,
  K0sController,
  K0sModel,
  PlaneCollector,
  PlaneData,
} from '../types.ts';
import { COMPONENTS, emptyPlane } from '../types.ts';
import { flagsOf } from '../normalize.ts';
import { K0S_BIN, K0S_DATA, k0sConfig } from './config.ts';
import {
  createToken,
  JOIN_TOKEN,
  processName,
  settledTree,
  stageBinaries,
  startController,
  step,
} from './controller.ts';
import { disableList, k0sComponents } from './components.ts';
import { collectPki } from './pki.ts';
import { scanLabHost } from '../../cis/index.ts';
import { collectWorker, workerLabName } from './worker-lab.ts';
import { readPlaneProcs } from '../proc-read.ts';

export { k0sConfig } from './config.ts';

export interface K0sOptions {
  /** A k0s binary the user has (its version is checked against the pin). */
  binary?: string;
  lab: string;
  keep: boolean;
}

/** Binaries k0s finds in its bin dir: what it would have embedded, at the versions it pins. */
export const K0S_PARTS = [
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'k0s-etcd',
  'konnectivity-server',
] as const;

function errorText(err: unknown): string {
  const text =
    err instanceof StepError
      ? [err.message, ...err.detail.map((d) => d.trim())].filter(Boolean).join(' | ')
      : err instanceof Error
        ? err.message
        : String(err);
  return text.replace(/[.\s]+$/, '');
}

async function acquire(opts: K0sOptions, ctx: CollectContext): Promise<EnsuredBinary> {
  const version = ctx.params.kubernetesVersion;
  if (opts.binary)
    return ensureBinary('k0s', {
      kubernetesVersion: version,
      from: join(opts.binary, '..'),
      log: ctx.log,
    });
  return ensureBinary('k0s', { kubernetesVersion: version, log: ctx.log });
}

async function controllerFacts(
  plane: PlaneData,
  s: Session,
  topology: K0sController['topology'],
  readyMs: number,
): Promise<K0sController> {
  const { main, descendants } = await settledTree(s, plane);
  return {
    host: s.host.name,
    address: s.host.address,
    topology,
    readyMs,
    mainPid: main.pid,
    mainArgv: main.argv,
    children: descendants.map((d) => ({
      pid: d.pid,
      ppid: d.ppid,
      name: processName(d.argv),
      argv: d.argv,
    })),
  };
}

const commandsOf = (c: K0sController): Partial<Record<Component, string[]>> =>
  Object.fromEntries(
    c.children
      .filter((p) => (COMPONENTS as readonly string[]).includes(p.name))
      .map((p) => [p.name, p.argv]),
  );

/**
 * Per component, the flags whose value is not the same on every controller, with each
 * controller's own address written <own-address> so that only what topology changes remains.
 */
function haDelta(controllers: K0sController[]): K0sModel['haDelta'] {
  const own = (c: K0sController, v: string | undefined) =>
    v === undefined ? null : v.replaceAll(c.address, '<own-address>');
  const parsed = controllers.map((c) => ({ c, cmds: commandsOf(c) }));
  const out: K0sModel['haDelta'] = {};
  for (const comp of COMPONENTS) {
    const flags = parsed.map(({ c, cmds }) => ({ c, f: flagsOf(cmds[comp] ?? []) }));
    const names = [...new Set(flags.flatMap(({ f }) => [...f.keys()]))].sort();
    out[comp] = names
      .map((flag) => ({ flag, values: flags.map(({ c, f }) => own(c, f.get(flag))) }))
      .filter((r) => new Set(r.values).size > 1);
  }
  return out;
}

async function runPlane(
  plane: PlaneData,
  k0s: EnsuredBinary,
  opts: K0sOptions,
  ctx: CollectContext,
): Promise<void> {
  const lab = await import('../../lab/index.ts');
  const labOpts = { name: opts.lab, stateDir: ctx.stateDir, log: ctx.log };
  const parts = await ensureAll(K0S_PARTS, {
    kubernetesVersion: ctx.params.kubernetesVersion,
    log: ctx.log,
  });
  let t0 = performance.now();
  await lab.labDown(labOpts);
  const info = await lab.labUp({ ...labOpts, hosts: 4 });
  plane.steps.push({
    step: `fresh lab "${opts.lab}" up (4 hosts)`,
    ms: Math.round(performance.now() - t0),
    ok: true,
    output: info.hosts.map((h) => `${h.name} ${h.address}`).join(', '),
  });
  const sessions: Session[] = [];
  try {
    for (const h of info.hosts) sessions.push(await lab.labConnect(h.name, labOpts));
    const [single, first, ...joiners] = sessions as [Session, Session, ...Session[]];
    t0 = performance.now();
    await Promise.all(
      sessions.map((s) => stageBinaries(s, k0s, parts, k0sConfig(ctx.params, s.host.address))),
    );
    plane.steps.push({
      step: `stage k0s ${k0s.version} and ${parts.map((p) => `${p.name} ${p.version}`).join(', ')} on 4 hosts`,
      ms: Math.round(performance.now() - t0),
      ok: true,
    });
    plane.version = (await step(plane, single, [K0S_BIN, 'version'], 'k0s version')).trim();
    ctx.log.info(
      `  k0s: single controller on ${single.host.name}, HA plane on ${sessions
        .slice(1)
        .map((s) => s.host.name)
        .join(', ')}`,
    );
    // The single controller and the first HA controller start side by side; joiners one at a time,
    // as etcd members join one at a time.
    const [singleMs, firstMs] = await Promise.all([
      startController(plane, single, false),
      startController(plane, first, false),
    ]);
    const token = await createToken(plane, first, 'controller');
    const joinMs: number[] = [];
    for (const s of joiners) {
      await s.writeFileAtomic(JOIN_TOKEN, token, { mode: 0o600 });
      joinMs.push(await startController(plane, s, true));
    }
    plane.notes.push(
      `k0s runs with its default components on these four controllers: konnectivity-server, metrics-server, kube-proxy, CoreDNS and the rest are on. They have no worker, so those Pods stay Pending there; the worker joins a controller of its own (lab "${workerLabName(opts.lab)}")`,
    );
    const facts: K0sController[] = [
      await controllerFacts(plane, single, 'single', singleMs),
      await controllerFacts(plane, first, 'ha', firstMs),
      ...(await Promise.all(joiners.map((s, i) => controllerFacts(plane, s, 'ha', joinMs[i]!)))),
    ];
    const ha = facts[1]!;
    for (const [c, argv] of Object.entries(commandsOf(ha)))
      plane.commands[c as Component] = {
        argv: argv!,
        source: `/proc/${ha.children.find((p) => p.name === c)!.pid}/cmdline on ${ha.host} (HA controller 1 of 3)`,
      };
    const members = (
      await step(plane, first, [K0S_BIN, 'etcd', 'member-list'], 'k0s etcd member-list')
    ).trim();
    const help = await step(
      plane,
      first,
      [K0S_BIN, 'controller', '--help'],
      'k0s controller --help',
    );
    const defaultConfig = await step(
      plane,
      single,
      [K0S_BIN, 'config', 'create'],
      'k0s config create',
    );
    const tree = join(cacheDir(), 'gosrc', `k0s-${k0s.version}`);
    const components = k0sComponents(tree, k0s.version);
    if (!components)
      plane.notes.push(
        `k0s source for ${k0s.version} is not in ${tree} (the binary was not built from it here), so the in-process component list is missing`,
      );
    plane.k0s = {
      version: plane.version,
      controllers: facts,
      etcdMembers: members,
      disableComponents: disableList(help),
      defaultConfig,
      components: components ?? [],
      haDelta: haDelta(facts),
    };
    // The process model of the HA controller the columns come from.
    plane.processes.push({
      name: 'k0s controller',
      kind: 'supervisor',
      parent: 'systemd (PID 1), unit k0scontroller',
      pid: ha.mainPid,
      source: `/proc/${ha.mainPid} on ${ha.host}`,
      details: { argv: ha.mainArgv.join(' ') },
    });
    for (const p of ha.children) {
      const by = components?.find((c) => c.process === p.name);
      plane.processes.push({
        name: p.name,
        kind: 'child',
        parent: 'k0s controller',
        pid: p.pid,
        source: `/proc/${p.pid}/cmdline on ${ha.host}`,
        details: { argv0: p.argv[0] ?? '' },
        ...(by
          ? { citation: { text: `${by.expr} (${by.at.file}:${by.at.line})`, url: by.at.url } }
          : {}),
      });
    }
    for (const c of components ?? []) {
      if (c.process) continue;
      plane.processes.push({
        name: c.name,
        kind: 'in-process',
        parent: 'k0s controller',
        source: `${c.at.file}:${c.at.line}`,
        details: {
          manager: `${c.manager} components`,
          ...(c.condition ? { when: c.condition } : {}),
          ...(c.disableAs ? { disable: `--disable-components=${c.disableAs}` } : {}),
        },
        citation: { text: `${c.expr} (${c.at.file}:${c.at.line})`, url: c.at.url },
      });
    }
    await collectPki(plane, first);
    if (ctx.cis) plane.cis = await scanLabHost('k0s', first, ctx.params.kubernetesVersion, ctx.log);
    plane.pathTokens.push(
      [first.host.address, '<host-address>'],
      [`${K0S_DATA}/pki/`, '<pki>/'],
      [`${K0S_DATA}/etcd`, '<etcd-data>'],
      [`${K0S_DATA}/`, '<data>/'],
    );
    plane.host = `${opts.lab}/${first.host.name}`;
    await collectWorker(plane, k0s, parts, opts, ctx);
    const roles = [
      'k0s controller (single)',
      'k0s controller (HA, first)',
      'k0s controller (HA, joined)',
      'k0s controller (HA, joined)',
    ];
    plane.nodeProcs = [
      ...(await readPlaneProcs(
        sessions.map((s, i) => ({
          s,
          host: `${opts.lab}/${s.host.name}`,
          role: roles[i] ?? 'k0s controller',
        })),
        plane,
      )),
      ...(plane.nodeProcs ?? []),
    ];
    plane.why = `real k0s ${plane.version} with default components on fresh lab hosts: single controller ${single.host.name}, HA controllers ${sessions
      .slice(1)
      .map((s) => s.host.name)
      .join(', ')} (columns from ${first.host.name})`;
  } finally {
    await Promise.all(sessions.map((s) => s.close()));
    if (!opts.keep) await lab.labDown(labOpts);
  }
}

export function k0sCollector(opts: K0sOptions): PlaneCollector {
  return {
    plane: 'k0s',
    async collect(ctx) {
      const t0 = performance.now();
      let k0s: EnsuredBinary;
      try {
        k0s = await acquire(opts, ctx);
      } catch (err) {
        const why = `no k0s binary: ${errorText(err)}`;
        const plane = emptyPlane('k0s', why);
        plane.steps.push({
          step: 'acquire k0s binary',
          ms: Math.round(performance.now() - t0),
          ok: false,
          output: why,
        });
        return plane;
      }
      const plane = emptyPlane('k0s', '', true);
      plane.steps.push({
        step: `k0s ${k0s.version} (${k0s.source}, ${k0s.origin})`,
        ms: Math.round(performance.now() - t0),
        ok: true,
      });
      try {
        await runPlane(plane, k0s, opts, ctx);
      } catch (err) {
        return {
          ...plane,
          collected: false,
          why: `k0s ${k0s.version} did not come up on the lab: ${errorText(err)}`,
        };
      }
      return plane;
    },
  };
}
