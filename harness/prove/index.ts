// `hardwire flags prove` (issue 25): the flag map's read sites, hit by delve in the debug build of
// a component running on a wired host with its unit's exact flags.
import type { Inventory } from '../../core/inventory/load.ts';
import type { Session } from '../../core/transport/index.ts';
import type { Logger } from '../../lib/log.ts';
import { newContext, session } from '../../core/apply/context.ts';
import { runPhases } from '../../core/apply/phase.ts';
import { connectPhase } from '../../core/apply/phases/connect.ts';
import { adminCreds } from '../../core/apply/creds.ts';
import { ensureAll } from '../../core/components/binaries/index.ts';
import {
  rowOf,
  type BinaryName,
  type ComponentName,
  type PerComponent,
} from '../../core/components/registry/index.ts';
import { clusterStateDir } from '../../core/pki/store.ts';
import { InputError, StepError } from '../../lib/errors.ts';
import { passedFlags, planFlags, planGuards, type FlagPlan } from './sites.ts';
import { loadFlagMap, type FlagMap } from '../../core/flags/map.ts';
import { proveOnHost, type HostOutcome } from './host.ts';
import { othersStopped, withSteps, type PlanStep } from './others.ts';
import { readFirstBoot } from './first-boot.ts';
import { classify, type FlagResult } from './classify.ts';
import { etcdProveGate, leaseGate, readyzGate } from './gates.ts';
import { besideArgv } from '../delve/beside.ts';
import { debugBuildBinaryVersions } from '../delve/modules.ts';
import type { ProvenRecord } from '../../core/flags/proven.ts';
import type { Shutdown } from './trace.ts';
import { foreignArgv, toolArgv, type FlagsOf } from './foreign/index.ts';
import type { Tool } from './foreign/translate.ts';
import { unitOf } from '../../lib/unit.ts';

/**
 * What each provable component needs: its debug build, and its gate (healthz port and Lease; etcd:
 * its health; kube-apiserver: /readyz of the debug instance, run beside the unit as trace apply runs it).
 */
export const PROVABLE = {
  'kube-scheduler': { debug: 'kube-scheduler-debug', port: 10259, lease: 'kube-scheduler' },
  'kube-controller-manager': {
    debug: 'kube-controller-manager-debug',
    port: 10257,
    lease: 'kube-controller-manager',
  },
  'kube-apiserver': { debug: 'kube-apiserver-debug', beside: true, stopAfterGate: true },
  // etcd: a first boot where it has one member (harness/prove/first-boot.ts), sent SIGTERM after its gate.
  etcd: { debug: 'etcd-debug', stopAfterGate: true, firstBoot: true },
} as const satisfies Record<
  string,
  {
    debug: BinaryName;
    port?: number;
    lease?: string;
    beside?: true;
    stopAfterGate?: true;
    firstBoot?: true;
  }
>;
export type ProvableComponent = keyof typeof PROVABLE;

/** Why the others cannot be proven yet: with PROVABLE, a row for every component (tsc checks). */
const NOT_PROVABLE = {
  containerd: 'containerd is not Kubernetes: the flag map has no flags of it to prove',
  'kube-vip':
    'kube-vip is not Kubernetes: no flag map; its model cites each read site, re-opened by test/kube-vip-citations.test.ts',
  registry:
    'the distribution registry is not Kubernetes: no flag map; its model cites each read site, re-opened by test/registry-citations.test.ts',
  kubelet: 'no debug build and gate for a worker component yet (the control plane came first)',
  'kube-proxy': 'no debug build and gate for a worker component yet (the control plane came first)',
} as const satisfies PerComponent<string, Exclude<ComponentName, ProvableComponent>>;

export interface ProveReport {
  component: string;
  kubernetesVersion: string;
  host: string;
  date: string;
  debugBinary: { name: string; sha256: string };
  dlv: { version: string; sha256: string };
  argv: string[];
  /** Flags the run passed with another value than the unit (kube-apiserver beside the unit); their sites are traced with the run's value. */
  changed?: { flag: string; unit?: string; run: string }[];
  /** What the gate saw of the traced instance (the Lease holder; etcd: its healthy members): proof that it, not the unit, passed. */
  holder: string;
  exited?: number;
  /** The debuggee sent SIGTERM after its gate (kube-apiserver), traced until it exited; sites first hit then are `atShutdown`. */
  shutdown?: Shutdown;
  /** etcd: whether it booted first in an empty data dir (the host changes made around the trace, in order), or why not. */
  firstBoot?: { done: boolean; why: string; steps: string[] };
  seconds: { total: number; traced: number };
  /**
   * sitesOff: not hit, and ruled out by the unit's own flags (decide.ts); `contradictions`: hit
   * though ruled out. The share that matters is sitesHit of the sites - sitesOff not ruled out.
   */
  counts: {
    flags: number;
    hit: number;
    notHit: number;
    notProvable: number;
    sites: number;
    sitesHit: number;
    sitesNotHit: number;
    sitesUnset: number;
    sitesOff: number;
    contradictions: number;
  };
  flags: FlagResult[];
  /** `--flags-of`: whose flags ran (another tool's, translated onto this host), with each flag's original value. */
  flagsOf?: FlagsOf;
}

export function isProvable(c: string): c is ProvableComponent {
  return Object.hasOwn(PROVABLE, c);
}

export async function prove(
  inv: Inventory,
  stateDir: string,
  component: string,
  opts: { gateTimeoutMs: number; acceptNewHostKeys: boolean; map?: FlagMap; flagsOf?: Tool },
  log: Logger,
): Promise<ProveReport> {
  if (!isProvable(component))
    throw new InputError(
      '--component',
      `"${component}" cannot be proven yet${rowOf(NOT_PROVABLE, component) ? ` (${rowOf(NOT_PROVABLE, component)})` : ''}; one of ${Object.keys(PROVABLE).join(', ')}`,
    );
  const spec = PROVABLE[component];
  const started = Date.now();
  const version = inv.cluster.kubernetesVersion;
  const map = opts.map ?? loadFlagMap(component, version);
  if (map.component !== component)
    throw new InputError('--map', `is the flag map of ${map.component}, not ${component}`);
  const [debug, dlv] = await ensureAll([spec.debug, 'dlv'], { kubernetesVersion: version, log });
  const host = component === 'etcd' ? inv.etcdHosts[0] : inv.controlPlaneHosts[0];
  if (!host)
    throw new InputError(
      'inventory',
      `has no ${component === 'etcd' ? 'etcd' : 'control-plane'} host to prove on`,
    );
  // Another tool's flags are computed first, without the lab (kubeadm: its own dry run).
  const tool = opts.flagsOf
    ? await toolArgv(opts.flagsOf, inv, host, component, stateDir, log)
    : undefined;
  let flagsOf: FlagsOf | undefined;
  const flagsHook = tool
    ? {
        flags: async (s: Session, unitText: string) => {
          const r = await foreignArgv(s, inv, host, tool, unitText, unitOf(component));
          flagsOf = r.flagsOf;
          for (const t of r.flagsOf.flags.filter((f) => f.notProvable))
            log.warn(
              `  --${t.flag}=${t.original}: not provable on hardwire's host: ${t.notProvable}`,
            );
          return r.argv;
        },
      }
    : {};
  const clusterDir = clusterStateDir(stateDir, inv);
  const ctx = newContext(
    inv,
    stateDir,
    clusterDir,
    { dryRun: false, gateTimeoutMs: opts.gateTimeoutMs, acceptNewHostKeys: opts.acceptNewHostKeys },
    log,
  );
  let plans: FlagPlan[] = [];
  let out: HostOutcome | undefined;
  let firstBoot: ProveReport['firstBoot'];
  // The Kubernetes debug builds name some replaced staging modules by their required v0.0.0.
  const binary =
    component === 'etcd'
      ? new Map<string, { cache: string; binary: string }>()
      : debugBuildBinaryVersions(version);
  const gate =
    'lease' in spec
      ? leaseGate(component, spec.port, spec.lease, adminCreds(clusterDir))
      : 'beside' in spec
        ? readyzGate(adminCreds(clusterDir))
        : etcdProveGate(inv);
  await runPhases(
    [
      connectPhase,
      {
        id: 'prove',
        title: `Run the debug ${component} under delve on ${host.name} with ${tool ? `${tool.tool}'s flags` : "its unit's flags"}`,
        async run(c) {
          // The Lease must go to the traced instance: the other control-plane hosts' instances stop meanwhile.
          const others =
            'lease' in spec
              ? inv.controlPlaneHosts.filter((h) => h.name !== host.name).map((h) => h.name)
              : [];
          let steps: PlanStep[] = othersStopped(others, unitOf(component));
          // Another tool's flags restart the member on its data dir: no first boot for them.
          if ('firstBoot' in spec && !tool) {
            const fb = await readFirstBoot(inv, host, (h) => session(c, h));
            steps = fb.plan ?? [];
            firstBoot = {
              done: fb.plan !== undefined,
              why: fb.why,
              steps: steps.map((x) => `[${x.host}] ${x.msg}`),
            };
            log.info(
              fb.plan
                ? `  ${component}: first boot in an empty data dir (${fb.why})`
                : `  ${component}: no first boot: ${fb.why}`,
            );
          }
          out = await withSteps(c.wet, steps, () =>
            c.wet.run(host.name, `trace ${component}`, (s) =>
              proveOnHost(
                s,
                {
                  component,
                  gate,
                  dlv: dlv!.path,
                  debugBinary: debug!.path,
                  gateTimeoutMs: opts.gateTimeoutMs,
                  ...('beside' in spec ? { beside: besideArgv } : {}),
                  ...('stopAfterGate' in spec ? { stopAfterGate: true } : {}),
                  ...flagsHook,
                  ...(firstBoot?.done ? { unitStopped: true } : {}),
                },
                (argv) => {
                  plans = planFlags(map, argv.slice(1), binary);
                  return {
                    sites: plans.flatMap((p) => p.sites),
                    guards: planGuards(plans, binary),
                  };
                },
                log,
              ),
            ),
          );
        },
      },
    ],
    ctx,
  );
  if (!out) throw new StepError('flags prove', 'the trace did not run');
  const defaults = new Map(map.flags.map((f) => [f.name, f.default]));
  const flags = withOriginals(
    classify(plans, out.traces, (f) => defaults.get(f), tool ? tool.tool : undefined, out.guards),
    flagsOf,
  );
  const sites = flags.flatMap((f) => f.sites);
  const changed = changedFlags(out.unitArgv, out.argv);
  return {
    component,
    kubernetesVersion: version,
    host: host.name,
    date: new Date().toISOString(),
    debugBinary: { name: debug!.name, sha256: debug!.sha256 },
    dlv: { version: dlv!.version, sha256: dlv!.sha256 },
    argv: out.argv,
    ...(changed.length ? { changed } : {}),
    holder: out.holder,
    ...(out.exited !== undefined ? { exited: out.exited } : {}),
    ...(out.shutdown ? { shutdown: out.shutdown } : {}),
    ...(firstBoot ? { firstBoot } : {}),
    seconds: { total: (Date.now() - started) / 1000, traced: out.seconds },
    counts: {
      flags: flags.length,
      hit: flags.filter((f) => f.verdict === 'hit').length,
      notHit: flags.filter((f) => f.verdict === 'not hit').length,
      notProvable: flags.filter((f) => f.verdict === 'not provable').length,
      sites: sites.length,
      sitesHit: sites.filter((s) => s.status === 'hit').length,
      sitesNotHit: sites.filter((s) => s.status === 'not hit').length,
      sitesUnset: sites.filter((s) => s.status === 'unset').length,
      sitesOff: sites.filter((s) => s.status === 'off').length,
      contradictions: sites.filter((s) => s.contradiction).length,
    },
    flags,
    ...(flagsOf ? { flagsOf } : {}),
  };
}

/** The tool's original value on each flag run, and a `not provable` row for each flag it passes that could not run on this host. */
export function withOriginals(flags: FlagResult[], of: FlagsOf | undefined): FlagResult[] {
  if (!of) return flags;
  const original = new Map(of.flags.map((t) => [t.flag, t.original]));
  const ran = flags.map((f) =>
    original.get(f.flag) !== undefined && original.get(f.flag) !== f.value
      ? { ...f, original: original.get(f.flag)! }
      : f,
  );
  const skipped = of.flags
    .filter((t) => t.notProvable)
    .map(
      (t): FlagResult => ({
        flag: t.flag,
        value: t.original,
        verdict: 'not provable',
        reason: `not provable on hardwire's host: ${t.notProvable}`,
        sites: [],
      }),
    );
  return [...ran, ...skipped];
}

/** The flags the run passes with another value than the unit's (or that the unit does not pass). */
export function changedFlags(
  unitArgv: string[],
  argv: string[],
): { flag: string; unit?: string; run: string }[] {
  const unit = new Map(passedFlags(unitArgv.slice(1)).map((f) => [f.name, f.value]));
  return passedFlags(argv.slice(1))
    .filter((f) => unit.get(f.name) !== f.value)
    .map((f) => {
      const was = unit.get(f.name);
      return { flag: f.name, ...(was !== undefined ? { unit: was } : {}), run: f.value };
    });
}

/** The report as the record the flag map's "proven live" column reads. */
export function provenRecord(r: ProveReport): ProvenRecord {
  return {
    component: r.component,
    kubernetesVersion: r.kubernetesVersion,
    date: r.date.slice(0, 10),
    debugSha256: r.debugBinary.sha256,
    dlv: r.dlv.version,
    argv: r.argv,
    ...(r.flagsOf ? { flagsOf: r.flagsOf.tool } : {}),
    flags: Object.fromEntries(
      r.flags.map((f) => [
        f.flag,
        {
          verdict: f.verdict,
          sitesHit: f.sites.filter((s) => s.status === 'hit').length,
          sitesOff: f.sites.filter((s) => s.status === 'off').length,
          sites: f.sites.length,
          ...(f.reason ? { reason: f.reason } : {}),
          ...(f.original !== undefined ? { original: f.original } : {}),
          at: f.sites.map((s) => ({
            ref: s.ref,
            status: s.status,
            hits: s.hits,
            ...(s.at ? { function: s.at.function } : {}),
            ...(s.atShutdown ? { atShutdown: true } : {}),
            ...(s.ruledOut ? { ruledOut: s.ruledOut } : {}),
            ...(s.live ? { live: s.live } : {}),
            ...(s.contradiction ? { contradiction: true } : {}),
          })),
        },
      ]),
    ),
  };
}
