// `hardwire audit`: any cluster reachable over SSH, read and never written. Each host gets its own
// read-only session (core/transport/read-only.ts refuses anything else), so an unreachable host is
// one line and the rest of the report still comes out, marked partial.
import { connect, readOnly } from '../../core/transport/index.ts';
import type { Inventory } from '../../core/inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import { AUDITED, auditHost } from './discover.ts';
import type { AuditFlag, AuditHost, AuditReport } from './types.ts';

export type { AuditReport } from './types.ts';
export { auditPlan } from './upgrade.ts';

export async function audit(
  inv: Inventory,
  opts: { acceptNewHostKeys: boolean },
  log: Logger,
): Promise<AuditReport> {
  const partial: string[] = [];
  const hosts: AuditHost[] = [];
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
      partial.push(`${h.name}: not reachable over SSH (${h.address}): ${why}`);
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
      hosts.push(await auditHost(readOnly(session, AUDITED), h, partial));
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
  return { generatedAt: new Date().toISOString(), hosts, partial };
}

const cite = (f: AuditFlag) =>
  f.status === 'unknown'
    ? 'UNKNOWN: not in the flag map of this binary at this version'
    : f.status === 'unmapped'
      ? 'unmapped'
      : (f.cite ??
        (f.readAt[0]
          ? `read at ${f.readAt[0].ref}`
          : `registered at ${f.registeredAt?.ref ?? '?'}`));

function counts(rows: AuditFlag[]): string {
  const by = (s: AuditFlag['status']) => rows.filter((r) => r.status === s).length;
  return `${rows.length} (${by('read')} read, ${by('registered')} registered only, ${by('unknown')} unknown${by('unmapped') ? `, ${by('unmapped')} unmapped` : ''})`;
}

/** The report as text: every flag and field with its site, then the certificates. */
export function formatText(r: AuditReport): string {
  const out: string[] = [];
  for (const h of r.hosts) {
    out.push(`${h.name} (${h.address})${h.reachable ? '' : ': NOT REACHABLE'}`);
    for (const n of h.notes) out.push(`  ${n}`);
    for (const p of h.processes) {
      out.push(
        `  ${p.component} pid ${p.pid} ${p.version ?? 'version unknown'}${p.map ? ` (map ${p.map})` : ''}: flags ${counts(p.flags)}`,
      );
      for (const n of p.notes) out.push(`    note: ${n}`);
      for (const f of p.flags) out.push(`    --${f.name}=${f.value}  ${cite(f)}`);
      if (p.config) {
        out.push(
          `    config ${p.config.path} (${p.config.source}): fields ${counts(p.config.fields)}`,
        );
        for (const f of p.config.fields) out.push(`      ${f.name}: ${f.value}  ${cite(f)}`);
      }
    }
    if (h.certs.length) out.push(`  certificates (${h.certs.length}):`);
    for (const c of h.certs)
      out.push(
        `    ${c.path} (${c.namedBy}): ${c.subject}; expires ${c.notAfter.slice(0, 10)} (${c.daysLeft} d); ${c.signedBy ? `signed by ${c.signedBy}` : `issuer ${c.issuer}`}${c.problems.length ? `; ${c.problems.map((x) => x.toUpperCase()).join('; ')}` : ''}`,
      );
  }
  const procs = r.hosts.flatMap((h) => h.processes);
  const flags = procs.flatMap((p) => [...p.flags, ...(p.config?.fields ?? [])]);
  const certs = r.hosts.flatMap((h) => h.certs);
  out.push(
    `audit: ${r.hosts.length} host(s), ${procs.length} process(es), flags and fields ${counts(flags)}, ${certs.length} certificate(s), ${certs.filter((c) => c.problems.length).length} with problems`,
  );
  for (const p of r.partial) out.push(`partial: ${p}`);
  return `${out.join('\n')}\n`;
}
