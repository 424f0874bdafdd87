// `hardwire audit`: any cluster reachable over SSH, read and never written. Each host gets its own
// read-only session (core/transport/read-only.ts refuses anything else), so an unreachable host is
// one line and the rest of the report still comes out, marked partial.
import { connect, readOnly } from '../../core/transport/index.ts';
import { sshAddressOf } from '../../core/transport/session.ts';
import type { Inventory } from '../../core/inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import { auditHost, VERSION_ARGS } from './discover.ts';
import { lacksOf } from './lacks.ts';
import type { AuditApis, AuditHost, AuditReport } from './types.ts';
import { listerOn, storedApis } from './apis.ts';
import type { ApiLifecycle } from '../../core/upgrade/stored-apis.ts';
import { scanWith, type KubeBench } from '../cis/index.ts';

export type { AuditReport } from './types.ts';
export { auditPlan } from './upgrade.ts';
export { formatHtml, formatMarkdown, formatText } from './format.ts';

/**
 * kube-bench's targets for what runs on a host: master and controlplane where a kube-apiserver runs,
 * etcd where etcd does, node where a kubelet does. Roles as `hardwire cis` names them.
 */
export function cisTargets(components: string[]): { roles: string[]; targets: string[] } {
  const has = (c: string) => components.includes(c);
  return {
    roles: [
      ...(has('etcd') ? ['etcd'] : []),
      ...(has('kube-apiserver') ? ['control-plane'] : []),
      ...(has('kubelet') ? ['worker'] : []),
    ],
    targets: [
      ...(has('kube-apiserver') ? ['master'] : []),
      ...(has('etcd') ? ['etcd'] : []),
      ...(has('kube-apiserver') ? ['controlplane'] : []),
      ...(has('kubelet') ? ['node'] : []),
    ],
  };
}

export async function audit(
  inv: Inventory,
  opts: {
    acceptNewHostKeys: boolean;
    cis?: KubeBench;
    /** A binary with no committed flag map gets one built (harness/flags/kubernetes-on-demand.ts) unless --no-regenerate. */
    onDemand?: Parameters<typeof auditHost>[3];
    /** --upgrade-to: list the objects in the APIs `to` stops serving (apis.ts). */
    apis?: { lifecycle: ApiLifecycle; to: string };
  },
  log: Logger,
): Promise<AuditReport> {
  const partial: string[] = [];
  const hosts: AuditHost[] = [];
  let apis: AuditApis | undefined;
  const apiErrors: string[] = [];
  for (const h of inv.hosts) {
    const t0 = performance.now();
    let session: Awaited<ReturnType<typeof connect>> | undefined;
    try {
      session = await connect(h, {
        ...(inv.knownHostsFile ? { knownHostsFile: inv.knownHostsFile } : {}),
        acceptNewHostKeys: opts.acceptNewHostKeys,
        timeoutMs: 10_000,
      });
    } catch (err) {
      const why = (err instanceof Error ? err.message : String(err)).split('\n')[0];
      partial.push(`${h.name}: not reachable over SSH (${sshAddressOf(h)}): ${why}`);
      hosts.push({
        name: h.name,
        address: h.address,
        reachable: false,
        processes: [],
        certs: [],
        notes: [why ?? ''],
      });
      continue;
    }
    try {
      // The writable session goes no further than this line: only its read-only view is used.
      const ro = readOnly(session, VERSION_ARGS);
      const read = await auditHost(ro, h, partial, opts.onDemand);
      for (const p of read.processes) {
        const lacks = lacksOf(inv, h.name, p);
        if (lacks.length) p.lacks = lacks;
      }
      hosts.push(read);
      // The first kube-controller-manager whose kubeconfig answers lists them; another host's may if it does not.
      const lister = opts.apis && !apis ? listerOn(read.processes) : undefined;
      if (opts.apis && lister) {
        try {
          apis = await storedApis(ro, h.name, lister, opts.apis.lifecycle, opts.apis.to);
        } catch (err) {
          apiErrors.push(
            `${h.name}: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}`,
          );
        }
      }
      // --cis, the one write the audit makes when asked: kube-bench in a temporary directory under
      // /tmp, removed after (harness/cis/scan.ts), with kube-bench's stock profile.
      const { roles, targets } = cisTargets(read.processes.map((p) => p.component));
      if (opts.cis && targets.length) {
        try {
          read.cis = await scanWith(
            (_msg, fn) => fn(session!),
            { host: h.name, roles, targets, skipped: undefined },
            opts.cis,
          );
        } catch (err) {
          const why = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
          partial.push(`${h.name}: kube-bench did not run: ${why}`);
        }
      }
    } catch (err) {
      const why = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
      partial.push(`${h.name}: reading it failed: ${why}`);
      hosts.push({
        name: h.name,
        address: h.address,
        reachable: true,
        processes: [],
        certs: [],
        notes: [why],
      });
    } finally {
      await session.close();
    }
    log.step(`read ${h.name} (${Math.round(performance.now() - t0)} ms)`);
  }
  if (opts.apis && !apis)
    partial.push(
      `the objects in APIs ${opts.apis.to} stops serving were not listed: ${apiErrors.length ? apiErrors.join('; ') : 'no kube-controller-manager with a --kubeconfig runs on these hosts'}`,
    );
  return { generatedAt: new Date().toISOString(), hosts, partial, ...(apis ? { apis } : {}) };
}
