// The `yours` plane (compare --plane yours=HOSTS, issue 42): a running cluster compare did not build,
// read the way `hardwire audit` reads one (harness/audit: read-only sessions, /proc, each binary's
// own version), beside the three planes compare builds. Only what does not depend on when it was
// built: flags, certificate files (never a kubeconfig, which holds a key), process trees, CIS and how
// its nodes reach the API. Nothing here knows how the cluster was made.
import { connect, readOnly, type ReadSession } from '../../core/transport/index.ts';
import type { Inventory } from '../../core/inventory/load.ts';
import { audit } from '../audit/index.ts';
import { VERSION_ARGS, readAsProcess } from '../audit/discover.ts';
import { certBlocks } from '../audit/certs.ts';
import type { AuditHost, AuditProcess } from '../audit/types.ts';
import type { KubeBench } from '../cis/index.ts';
import { planeReport } from '../cis/index.ts';
import type { EnsuredBinary } from '../../core/components/binaries/index.ts';
import { certFacts } from './x509.ts';
import { KUBEADM_TOKENS, flagsOf } from './normalize.ts';
import { ROLE_FLAGS } from './cert-roles.ts';
import { readHostProcs } from './proc-read.ts';
import { readNodeProcess } from './node-read.ts';
import { readNodeEndpoint } from './node-endpoint.ts';
import { NODE_COMPONENTS } from './node-types.ts';
import type { ProcNode } from './proc-tree.ts';
import {
  COMPONENTS,
  emptyPlane,
  type CollectContext,
  type PlaneCollector,
  type PlaneData,
  type PlaneProcess,
} from './types.ts';

export interface YoursOptions {
  /** The cluster's hosts and SSH settings (its `cluster` block is not read). */
  inv: Inventory;
  acceptNewHostKeys: boolean;
  /** A binary with no committed flag map: build one (harness/flags/kubernetes-on-demand.ts). */
  onDemand?: Parameters<typeof audit>[1]['onDemand'];
  /** kube-bench, stock profile, on each host when compare runs CIS (the one write, as audit --cis). */
  cis?: { bench: KubeBench; bin: EnsuredBinary };
}

const has = (h: AuditHost, c: string) => h.processes.some((p) => p.component === c);

/** Where a process runs, in PlaneProcess's words, from its node in the host's process tree. */
function processOf(p: AuditProcess, node: ProcNode | undefined, host: string): PlaneProcess {
  const kind: PlaneProcess['kind'] =
    node?.kind === 'unit'
      ? 'systemd-unit'
      : node?.kind === 'container'
        ? 'static-pod'
        : node?.kind === 'k0s-child'
          ? 'child'
          : 'supervisor';
  return {
    name: p.component,
    kind,
    parent: node?.under ?? 'unknown',
    pid: p.pid,
    source: `/proc/${p.pid} on ${host}`,
    details: {
      binary: p.argv[0] ?? '',
      version: p.version ?? 'unknown',
      cgroup: node?.cgroup ?? '',
    },
  };
}

/**
 * Each certificate file the host's processes name, with the role the naming flag gives it (as k0s's
 * plane does). Paths are not renamed to kubeadm's by role, as k0s's are: a cluster of yours is
 * normalised by kubeadm's prefixes alone, so that where it keeps a file is a difference it shows.
 */
async function certsOf(plane: PlaneData, s: ReadSession, h: AuditHost): Promise<void> {
  const roleOfPath = new Map<string, string>();
  for (const p of h.processes) {
    const roles = (ROLE_FLAGS as Record<string, Record<string, string>>)[p.component] ?? {};
    for (const f of p.flags) {
      const role = roles[f.name];
      if (!role || roleOfPath.has(f.value)) continue;
      roleOfPath.set(f.value, role);
    }
  }
  for (const c of h.certs) {
    if (!c.notAfter) continue;
    const role = roleOfPath.get(c.path);
    if (!role || role.startsWith('kubeconfig/') || role === 'sa') continue;
    const by = h.processes.find((p) => p.flags.some((f) => f.value === c.path));
    const file = by ? await readAsProcess(s, by.pid, c.path) : undefined;
    const pem = file ? certBlocks(file.text)[0] : undefined;
    if (pem) plane.certs.push({ role, path: c.path, kind: 'cert', facts: certFacts(pem) });
  }
}

export function yoursCollector(o: YoursOptions): PlaneCollector {
  return {
    plane: 'yours',
    async collect(ctx: CollectContext): Promise<PlaneData> {
      const t0 = performance.now();
      const names = o.inv.hosts.map((h) => h.name).join(', ');
      const report = await audit(
        o.inv,
        {
          acceptNewHostKeys: o.acceptNewHostKeys,
          ...(o.onDemand ? { onDemand: o.onDemand } : {}),
          ...(ctx.cis && o.cis ? { cis: o.cis.bench } : {}),
        },
        ctx.log,
      );
      const main = report.hosts.find((h) => has(h, 'kube-apiserver'));
      if (!main)
        return emptyPlane(
          'yours',
          `no kube-apiserver runs on ${names}${report.partial.length ? ` (${report.partial.join('; ')})` : ''}`,
        );
      const plane = emptyPlane(
        'yours',
        `read with hardwire audit on ${names}: read-only sessions, nothing written${ctx.cis && o.cis ? ' but kube-bench in a temporary directory' : ''}`,
        true,
      );
      plane.steps.push({
        step: `hardwire audit of ${names}`,
        ms: Math.round(performance.now() - t0),
        ok: report.partial.length === 0,
        ...(report.partial.length ? { output: report.partial.join('\n') } : {}),
      });
      for (const p of report.partial) plane.notes.push(`partial: ${p}`);
      plane.host = main.name;
      plane.mode = 'audited (read-only)';
      // Each component from the compared host when it runs there, else from the first host that runs it.
      const all = [main, ...report.hosts.filter((h) => h !== main)].flatMap((h) =>
        h.processes.map((p) => ({ h, p })),
      );
      const apiserver = main.processes.find((p) => p.component === 'kube-apiserver')!;
      if (apiserver.version) plane.version = apiserver.version;
      for (const c of COMPONENTS) {
        const hit = all.find((x) => x.p.component === c);
        if (hit)
          plane.commands[c] = {
            argv: hit.p.argv,
            source: `/proc/${hit.p.pid}/cmdline on ${hit.h.name}`,
          };
      }
      const controlPlanes = report.hosts
        .filter((h) => has(h, 'kube-apiserver'))
        .map((h) => ({ name: h.name, address: h.address }));
      const worker = report.hosts.find((h) => has(h, 'kubelet') && h.reachable);
      for (const h of o.inv.hosts) {
        const read = report.hosts.find((x) => x.name === h.name);
        if (!read?.reachable) continue;
        const session = await connect(h, {
          ...(o.inv.knownHostsFile ? { knownHostsFile: o.inv.knownHostsFile } : {}),
          acceptNewHostKeys: o.acceptNewHostKeys,
          timeoutMs: 10_000,
        });
        const s = readOnly(session, VERSION_ARGS);
        try {
          const role = read.processes.map((p) => p.component).join(', ') || 'nothing of Kubernetes';
          const procs = await readHostProcs(s, h.name, role);
          (plane.nodeProcs ??= []).push(procs);
          if (h.name === main.name) {
            await certsOf(plane, s, main);
            for (const c of COMPONENTS) {
              const p = main.processes.find((x) => x.component === c);
              if (p)
                plane.processes.push(
                  processOf(
                    p,
                    procs.procs.find((n) => n.pid === p.pid),
                    h.name,
                  ),
                );
            }
          }
          if (h.name === worker?.name) {
            const node: NonNullable<PlaneData['node']> = {
              host: h.name,
              components: {},
              reasons: {},
            };
            for (const c of NODE_COMPONENTS) {
              const p = read.processes.find((x) => x.component === c);
              if (p) node.components[c] = await readNodeProcess(s, p.pid, h.name);
            }
            plane.node = node;
            plane.nodeEndpoint = await readNodeEndpoint(
              s,
              h.name,
              controlPlanes,
              'the kubeconfig each client names, as read on the node (compare did not configure this cluster)',
            );
          }
        } finally {
          await session.close();
        }
      }
      // As every plane's: kubeadm's prefixes, and the compared host's own address.
      plane.pathTokens.push(...KUBEADM_TOKENS, [main.address, '<host-address>']);
      const cisHosts = report.hosts.flatMap((h) => (h.cis ? [h.cis] : []));
      if (o.cis && cisHosts.length) plane.cis = planeReport('yours', o.cis.bin, cisHosts);
      if (!flagsOf(apiserver.argv).size) plane.notes.push('the kube-apiserver runs with no flags');
      return plane;
    },
  };
}
