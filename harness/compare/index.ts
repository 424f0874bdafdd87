// hardwire compare: collect each plane with the same cluster parameters, build the matrices.
import type { Inventory, Host } from '../../core/inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import { InputError } from '../../lib/errors.ts';
import { hardwireCollector } from '../planes/hardwire.ts';
import { kubeadmCollector } from '../planes/kubeadm.ts';
import { k0sCollector } from '../planes/k0s/index.ts';
import { buildReport } from './build.ts';
import { PLANES, emptyPlane } from '../planes/types.ts';
import type { ClusterParams, PlaneCollector, PlaneData, PlaneName } from '../planes/types.ts';
import type { CompareReport } from './types.ts';
import { DEFAULT_GATE_TIMEOUT_MS } from '../../lib/constants.ts';
import { compareExtraArgs, upgradeSection } from './upgrade.ts';
import { yoursCollector, type YoursOptions } from '../planes/yours.ts';
import { NOT_ASKED } from '../planes/plane-names.ts';

export interface CompareOptions {
  inv: Inventory;
  stateDir: string;
  log: Logger;
  /** The hardwire host to compare (default: the first control-plane host that also runs etcd). */
  host?: string;
  live: boolean;
  kubeadmLab: string;
  k0sLab: string;
  k0sBinary?: string;
  keepLabs: boolean;
  /** --accept-new-host-keys and --gate-timeout, for the hardwire plane's hosts. */
  acceptNewHostKeys?: boolean;
  gateTimeoutMs?: number;
  /** kube-bench on every plane, for the CIS section. */
  cis: boolean;
  /** The upgrade target: kubeadm's real `upgrade plan` beside hardwire's (checked first, upgrade-target.ts). */
  upgrade?: string;
  /** Wire the hardwire plane inside the run (its time to first Pod from the bare lab). */
  wire?: () => Promise<void>;
  /** --plane yours=HOSTS: a running cluster read as audit reads it, the fourth column (planes/yours.ts). */
  yours?: YoursOptions;
}

export function pickHost(inv: Inventory, name?: string): Host {
  if (name) {
    const h = inv.hosts.find((x) => x.name === name);
    if (!h)
      throw new InputError(
        '--host',
        `no host "${name}" in ${inv.file}; hosts are ${inv.hosts.map((x) => x.name).join(', ')}`,
      );
    if (!h.isControlPlane || !h.isEtcd)
      throw new InputError(
        '--host',
        `${name} must have both the etcd and control-plane roles to compare all four components`,
      );
    return h;
  }
  const h = inv.hosts.find((x) => x.isControlPlane && x.isEtcd);
  if (!h) throw new InputError('--host', 'no host has both the etcd and control-plane roles');
  return h;
}

// No controlPlaneEndpoint: the inventory's VIP or load balancer lives on hardwire's hosts, and
// kubeadm's lab would send its kubeconfigs there (kubeadm.ts sets its own when it joins a member).
export function clusterParams(inv: Inventory, host: Host): ClusterParams {
  return {
    kubernetesVersion: inv.cluster.kubernetesVersion,
    clusterName: inv.cluster.name,
    nodeName: host.name,
    advertiseAddress: host.address,
    serviceCIDR: inv.cluster.serviceCIDR,
    podCIDR: inv.cluster.podCIDR,
    dnsDomain: inv.cluster.dnsDomain,
    extraSANs: inv.cluster.extraSANs,
    ...compareExtraArgs(inv),
    firstServiceIp: inv.serviceIp,
  };
}

export function collectors(opts: CompareOptions, host: Host): PlaneCollector[] {
  return [
    hardwireCollector({ host, live: opts.live, ...(opts.wire ? { wire: opts.wire } : {}) }),
    kubeadmCollector({
      lab: opts.kubeadmLab,
      keep: opts.keepLabs,
      workers: 1,
      ...(opts.upgrade ? { upgrade: opts.upgrade } : {}),
    }),
    k0sCollector({
      ...(opts.k0sBinary ? { binary: opts.k0sBinary } : {}),
      lab: opts.k0sLab,
      keep: opts.keepLabs,
    }),
    ...(opts.yours ? [yoursCollector(opts.yours)] : []),
  ];
}

export async function runCompare(opts: CompareOptions): Promise<CompareReport> {
  const host = pickHost(opts.inv, opts.host);
  const params = clusterParams(opts.inv, host);
  const ctx = {
    inv: opts.inv,
    params,
    stateDir: opts.stateDir,
    log: opts.log,
    cis: opts.cis,
    acceptNewHostKeys: opts.acceptNewHostKeys === true,
    gateTimeoutMs: opts.gateTimeoutMs ?? DEFAULT_GATE_TIMEOUT_MS,
  };
  const planes = {} as Record<PlaneName, PlaneData>;
  // One plane at a time: each kubeadm/k0s run boots its own lab host on a small machine.
  for (const c of collectors(opts, host)) {
    opts.log.step(`collecting the ${c.plane} plane`);
    const t0 = performance.now();
    try {
      planes[c.plane] = await c.collect(ctx);
    } catch (err) {
      if (err instanceof InputError) throw err;
      const msg = err instanceof Error ? err.message : String(err);
      const detail = (err as { detail?: string[] }).detail ?? [];
      planes[c.plane] = emptyPlane(
        c.plane,
        `${c.plane} collection failed: ${msg}${detail.length ? ` (${detail.slice(-3).join(' | ')})` : ''}`,
      );
    }
    const p = planes[c.plane];
    p.collectMs = Math.round(performance.now() - t0);
    opts.log.info(`  ${c.plane}: ${p.collected ? 'collected' : 'NOT collected'}: ${p.why}`);
  }
  planes.yours ??= emptyPlane('yours', NOT_ASKED);
  for (const p of PLANES) planes[p] ??= emptyPlane(p, 'no collector');
  const report = buildReport(params, planes);
  if (opts.upgrade)
    report.upgrade = await upgradeSection(
      opts.inv,
      opts.stateDir,
      opts.upgrade,
      opts.live,
      planes.kubeadm,
      opts.log,
    );
  return report;
}
