// The k0s plane's worker pair on a lab of its own (two worker lab hosts: a controller and the worker),
// so the plane's four controllers keep k0s's defaults (config.ts). Fills the plane's node column
// (kubelet, kube-proxy), its kubelet certificates and the k0s section's worker facts.
import type { EnsuredBinary } from '../../../core/components/binaries/index.ts';
import type { Session } from '../../../core/transport/index.ts';
import { readKubeletCerts } from '../kubelet-certs.ts';
import { cacheDir } from '../../../lib/paths.ts';
import { join } from 'node:path';
import type { CollectContext, PlaneData } from '../types.ts';
import { processName, processTree } from './controller.ts';
import { runWorkerPair } from './worker.ts';
import { workerReasons } from './worker-reasons.ts';
import { K0S_BIN, K0S_CONFIG } from './config.ts';
import { readNodeEndpoint } from '../node-endpoint.ts';
import { parse as parseYaml } from 'yaml';
import { WORKER_POD } from './worker.ts';
import { watchTtfp, type Watcher } from '../ttfp-watch.ts';
import { hostChecks } from '../ttfp-checks.ts';
import { scanLabNodes } from '../../cis/index.ts';
import { readPlaneProcs } from '../proc-read.ts';

/** The worker pair's lab: the plane's lab name and "-w", within a lab name's 40 characters. */
export const workerLabName = (lab: string): string => `${lab.slice(0, 38)}-w`;

/** The kube-apiserver's argv on the worker's controller, for the kubelet certificates' verdict. */
async function apiserverArgv(c: Session): Promise<{ argv: string[]; source: string }> {
  const t = await processTree(c);
  const p = t.descendants.find((d) => processName(d.argv) === 'kube-apiserver');
  if (!p) throw new Error(`no kube-apiserver below k0scontroller on ${c.host.name}`);
  return {
    argv: p.argv,
    source: `/proc/${p.pid}/cmdline on ${c.host.name} (the worker's controller)`,
  };
}

/** What in the controller's k0s.yaml chose the worker's endpoint: node-local load balancing or spec.api. */
async function nllbSetBy(c: Session): Promise<string> {
  const r = await c.exec(['cat', K0S_CONFIG], { allowFail: true });
  type Cfg = {
    spec?: {
      api?: { address?: string; externalAddress?: string };
      network?: { nodeLocalLoadBalancing?: { enabled?: boolean; type?: string } };
    };
  };
  const cfg = (r.code === 0 ? parseYaml(r.stdout) : {}) as Cfg;
  const nllb = cfg.spec?.network?.nodeLocalLoadBalancing;
  const api = cfg.spec?.api;
  return `${K0S_CONFIG} on ${c.host.name}: spec.network.nodeLocalLoadBalancing.enabled ${nllb?.enabled ?? 'unset (off by default)'}${nllb?.type ? ` (${nllb.type})` : ''}; spec.api.externalAddress ${api?.externalAddress || 'unset'}, so workers get spec.api.address ${api?.address ?? 'unset'}`;
}

export async function collectWorker(
  plane: PlaneData,
  k0s: EnsuredBinary,
  parts: EnsuredBinary[],
  opts: { lab: string; keep: boolean },
  ctx: CollectContext,
): Promise<void> {
  const lab = await import('../../lab/index.ts');
  const labOpts = { name: workerLabName(opts.lab), stateDir: ctx.stateDir, log: ctx.log };
  const t0 = performance.now();
  await lab.labDown(labOpts);
  const info = await lab.labUp({ ...labOpts, hosts: 2, workers: true });
  plane.steps.push({
    step: `fresh worker lab "${labOpts.name}" up (2 hosts)`,
    ms: Math.round(performance.now() - t0),
    ok: true,
    output: info.hosts.map((h) => `${h.name} ${h.address}`).join(', '),
  });
  const sessions: Session[] = [];
  let watch: Watcher | undefined;
  try {
    for (const h of [...info.hosts, info.hosts[0]!])
      sessions.push(await lab.labConnect(h.name, labOpts));
    const [c, w, ws] = sessions as [Session, Session, Session];
    // Time to first Pod: t0 is now (hosts up, nothing installed); the third session polls the controller.
    const node = (await w.exec(['hostname'])).stdout.trim();
    watch = watchTtfp(
      hostChecks(ws, '/var/lib/k0s/pki/server.crt', [K0S_BIN, 'kubectl'], node, {
        ns: 'default',
        name: WORKER_POD,
      }),
      { worker: node, pod: `default/${WORKER_POD}` },
    );
    const { worker, procs } = await runWorkerPair(
      plane,
      k0s,
      parts,
      { controller: c, worker: w },
      ctx.params,
      ctx.log,
    );
    plane.ttfp = await watch.finish();
    if (plane.k0s) plane.k0s.worker = worker;
    const components = {
      kubelet: procs.kubelet,
      ...(procs.kubeProxy ? { 'kube-proxy': procs.kubeProxy } : {}),
    };
    plane.node = {
      host: `${labOpts.name}/${w.host.name}`,
      components,
      reasons: workerReasons(
        components,
        join(cacheDir(), 'gosrc', `k0s-${k0s.version}`),
        k0s.version,
        ctx.params.kubernetesVersion,
      ),
    };
    try {
      plane.kubeletCerts = await readKubeletCerts(plane, w, await apiserverArgv(c));
    } catch (err) {
      plane.notes.push(`k0s worker: kubelet certificates not read: ${(err as Error).message}`);
    }
    const t1 = performance.now();
    plane.nodeEndpoint = await readNodeEndpoint(
      w,
      `${labOpts.name}/${w.host.name}`,
      [{ name: c.host.name, address: c.host.address }],
      await nllbSetBy(c),
    );
    plane.steps.push({
      step: 'read the API server the kubelet and kube-proxy name on the worker',
      ms: Math.round(performance.now() - t1),
      ok: plane.nodeEndpoint.kind !== 'unknown',
      output: plane.nodeEndpoint.clients.map((x) => `${x.component}: ${x.server}`).join('\n'),
    });
    if (ctx.cis)
      plane.nodeCis = await scanLabNodes(
        'k0s',
        [w],
        ctx.params.kubernetesVersion,
        ctx.log,
        plane.steps,
      );
    plane.nodeProcs = await readPlaneProcs(
      [
        { s: c, host: `${labOpts.name}/${c.host.name}`, role: 'k0s controller of the worker' },
        { s: w, host: `${labOpts.name}/${w.host.name}`, role: 'k0s worker' },
      ],
      plane,
    );
  } finally {
    await watch?.finish(0);
    await Promise.all(sessions.map((s) => s.close()));
    if (!opts.keep) await lab.labDown(labOpts);
  }
}
