// One CIS scan per plane. hardwire: every host of the inventory, through Wet. kubeadm and k0s: the
// first control-plane host of their live lab plane (compare/planes), through that plane's session,
// kubeadm with kube-bench's stock profile (its layout is the one CIS describes), k0s with
// cis/k0s/config.yaml.
import type { Inventory } from '../../core/inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import type { Session } from '../../core/transport/index.ts';
import { newContext, session } from '../../core/apply/context.ts';
import { runPhases } from '../../core/apply/phase.ts';
import { connectPhase } from '../../core/apply/phases/connect.ts';
import { componentsOn } from '../../core/components/registry/index.ts';
import { ensureBinary, type EnsuredBinary } from '../../core/components/binaries/index.ts';
import { assetDir } from '../../core/components/binaries/assets.ts';
import { clusterStateDir } from '../../core/pki/store.ts';
import { StepError } from '../../lib/errors.ts';
import { BENCHMARK, K0S_CONFIG, scanHost, scanWith, type KubeBench } from './scan.ts';
import { planeTotals, type PlaneReport } from './format.ts';
import type { HostReport } from './report.ts';
import { unitOf } from '../../lib/unit.ts';

export const CIS_PLANES = ['hardwire', 'kubeadm', 'k0s'] as const;
export type CisPlane = (typeof CIS_PLANES)[number];

export async function kubeBench(
  version: string,
  log: Logger,
): Promise<{ bin: EnsuredBinary; bench: KubeBench }> {
  const bin = await ensureBinary('kube-bench', { kubernetesVersion: version, log });
  return { bin, bench: { binary: bin.path, cfgDir: assetDir('kube-bench', bin.version, 'cfg') } };
}

/** One plane's scan: compare's three, or a cluster of yours read as audit reads it (planes/yours.ts). */
export function planeReport(
  plane: CisPlane | 'yours',
  bin: EnsuredBinary,
  hosts: HostReport[],
): PlaneReport {
  return {
    plane,
    benchmark: BENCHMARK,
    kubeBench: { version: bin.version, sha256: bin.sha256, source: bin.source, origin: bin.origin },
    hosts,
    totals: planeTotals(hosts),
  };
}

/** Every host of a wired hardwire plane; refuses (changing nothing) when a unit is not active. */
export async function scanHardwire(
  inv: Inventory,
  stateDir: string,
  opts: { acceptNewHostKeys: boolean; gateTimeoutMs: number },
  log: Logger,
): Promise<PlaneReport> {
  const { bin, bench } = await kubeBench(inv.cluster.kubernetesVersion, log);
  const ctx = newContext(
    inv,
    stateDir,
    clusterStateDir(stateDir, inv),
    { dryRun: false, ...opts },
    log,
  );
  const hosts: HostReport[] = [];
  await runPhases(
    [
      connectPhase,
      {
        id: 'wired',
        title: 'Check that hardwire is wired on every host (its units active)',
        async run(c) {
          for (const h of c.inv.hosts) {
            const units = componentsOn(h).map((x) => unitOf(x));
            const r = await session(c, h.name).exec(['systemctl', 'is-active', ...units], {
              allowFail: true,
            });
            const states = r.stdout.trim().split('\n');
            const down = units.filter((_, i) => states[i] !== 'active');
            if (down.length > 0)
              throw new StepError(
                'cis',
                `${down.join(', ')} not active; run "hardwire wire" first (nothing was changed)`,
                { host: h.name },
              );
          }
        },
      },
      {
        id: 'kube-bench',
        title: `Run kube-bench ${bin.version} (${BENCHMARK}) on each host, one at a time`,
        async run(c) {
          for (const h of c.inv.hosts) hosts.push(await scanHost(c, h, bench));
        },
      },
    ],
    ctx,
  );
  return planeReport('hardwire', bin, hosts);
}

/** A lab plane's controller (all three targets on it): kubeadm's stock profile, or k0s's paths. */
export async function scanLabHost(
  plane: 'kubeadm' | 'k0s',
  s: Session,
  version: string,
  log: Logger,
): Promise<PlaneReport> {
  const { bin, bench } = await kubeBench(version, log);
  const report = await scanWith(
    (_msg, fn) => fn(s),
    {
      host: s.host.name,
      roles: ['etcd', 'control-plane'],
      targets: ['master', 'etcd', 'controlplane'],
      skipped: undefined,
      ...(plane === 'k0s' ? { config: K0S_CONFIG } : {}),
    },
    bench,
  );
  return planeReport(plane, bin, [report]);
}

/**
 * The node section (4.x) alone on each node of a lab plane (issue 23): every host that runs a
 * kubelet, control-plane hosts included. kubeadm with the stock profile, k0s with its paths.
 */
export async function scanLabNodes(
  plane: 'kubeadm' | 'k0s',
  nodes: Session[],
  version: string,
  log: Logger,
  steps: { step: string; ms: number; ok: boolean }[],
): Promise<PlaneReport> {
  const { bin, bench } = await kubeBench(version, log);
  const hosts: HostReport[] = [];
  for (const s of nodes) {
    const t0 = performance.now();
    hosts.push(
      await scanWith(
        (_msg, fn) => fn(s),
        {
          host: s.host.name,
          roles: ['worker'],
          targets: ['node'],
          skipped: undefined,
          ...(plane === 'k0s' ? { config: K0S_CONFIG } : {}),
        },
        bench,
      ),
    );
    steps.push({
      step: `kube-bench --targets node on ${s.host.name}`,
      ms: Math.round(performance.now() - t0),
      ok: true,
    });
  }
  return planeReport(plane, bin, hosts);
}
