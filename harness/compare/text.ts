// The terminal summary and the Markdown report.
import { COMPONENTS, PLANES } from '../planes/types.ts';
import { k0sMarkdown } from './k0s-section.ts';
import { cisMarkdown, worstHost } from './cis-section.ts';
import { nodeMarkdown, nodeSummary } from './node-render.ts';
import { kubeletCertsMarkdown, kubeletCertsSummary } from './kubelet-cert-section.ts';
import { endpointMarkdown, endpointSummary } from './endpoint-section.ts';
import { upgradeMarkdown, upgradeSummary } from './upgrade-render.ts';
import { ttfpMarkdown, ttfpSummary } from './ttfp-section.ts';
import { procMarkdown, procSummary } from './proc-section.ts';
import { nodeCisMarkdown, nodeCisSummary } from './node-cis.ts';
import type { PlaneName } from '../planes/types.ts';
import type { CertRow, CompareReport, FlagRow } from './types.ts';
import { mdCell as mdEsc } from '../../lib/markdown.ts';

const cell = (v: string | null) => (v === null ? '—' : v);

/** The proven-live column: "hardwire: hit 4/4, … · kubeadm: -", the planes that pass the flag in PLANES order. */
export function provenLiveText(p: FlagRow['provenLive']): string {
  return PLANES.filter((x) => p[x] !== undefined)
    .map((x) => `${x}: ${p[x]}`)
    .join(' · ');
}

function certCell(c: CertRow['planes'][PlaneName]): string {
  if (!c) return 'unmatched';
  return [
    c.subject,
    `SAN ${c.sans.join(' ') || '-'}`,
    `KU ${c.keyUsage.join(',') || '-'}`,
    `EKU ${c.extKeyUsage.join(',') || '-'}`,
    `${c.notBefore.slice(0, 10)}..${c.notAfter.slice(0, 10)} (${c.validityDays}d)`,
    c.keyAlgorithm,
    `issuer ${c.issuer}`,
    ...(c.server ? [`server ${c.server}`] : []),
  ].join('<br>');
}

function siteLink(s: { file: string; line: number; url: string } | null | undefined): string {
  return s ? `[${s.file.split('/').pop()}:${s.line}](${s.url})` : '';
}

export function markdown(r: CompareReport): string {
  const out: string[] = [];
  out.push(`# hardwire vs kubeadm vs k0s at Kubernetes ${r.kubernetesVersion}`, '');
  out.push(
    `Parameters for every plane: cluster \`${r.params.clusterName}\`, node \`${r.params.nodeName}\`, advertise address ${r.params.advertiseAddress}, service CIDR ${r.params.serviceCIDR} (first IP ${r.params.firstServiceIp}), pod CIDR ${r.params.podCIDR}, DNS domain ${r.params.dnsDomain}.`,
    '',
  );
  out.push('## Planes', '', '| plane | collected | how / why |', '|---|---|---|');
  for (const p of PLANES)
    out.push(`| ${p} | ${r.planes[p].collected ? 'yes' : '**no**'} | ${mdEsc(r.planes[p].why)} |`);
  out.push('');
  for (const p of PLANES) for (const n of r.planes[p].notes) out.push(`- ${p}: ${mdEsc(n)}`);
  for (const n of r.notes) out.push(`- ${mdEsc(n)}`);
  out.push('', ...ttfpMarkdown(r.ttfp));
  out.push(
    "Path prefixes are normalised (`<pki>/` = the plane's PKI dir, `<conf>/` = its kubeconfig dir, `<etcd-data>`); raw values are in the JSON.",
    '',
  );
  for (const c of COMPONENTS) {
    const comp = r.components[c];
    out.push(
      `## ${c}`,
      '',
      `same ${comp.counts.same}, differs ${comp.counts.differs}, only in some planes ${comp.counts.partial}. Sources: ${Object.entries(
        comp.sources,
      )
        .map(([p, s]) => `${p}: ${s}`)
        .join('; ')}`,
      '',
    );
    out.push(
      '| flag | hardwire | kubeadm | k0s | class | reason | registered at | read at | proven live |',
      '|---|---|---|---|---|---|---|---|---|',
    );
    for (const f of comp.flags) {
      out.push(
        `| --${f.name} | ${mdEsc(cell(f.values.hardwire))} | ${mdEsc(cell(f.values.kubeadm))} | ${mdEsc(cell(f.values.k0s))} | ${f.class} | ${mdEsc(f.reason)} | ${siteLink(f.registeredAt)} | ${f.consumedAt.map(siteLink).join(' ')} | ${mdEsc(provenLiveText(f.provenLive))} |`,
      );
    }
    out.push('');
  }
  out.push(...nodeMarkdown(r.node));
  out.push(
    '## Certificates and kubeconfig identities',
    '',
    '| role | differs in | hardwire | kubeadm | k0s |',
    '|---|---|---|---|---|',
  );
  for (const row of r.certs)
    out.push(
      `| ${row.role} | ${row.differs.join(', ') || (row.matched === 'all' ? 'nothing' : '')}${row.matched === 'some' ? ' (unmatched in some planes)' : ''} | ${mdEsc(certCell(row.planes.hardwire))} | ${mdEsc(certCell(row.planes.kubeadm))} | ${mdEsc(certCell(row.planes.k0s))} |`,
    );
  out.push('', ...kubeletCertsMarkdown(r));
  out.push(...endpointMarkdown(r));
  out.push('## Process model', '');
  for (const p of PLANES) {
    out.push(`### ${p}`, '');
    if (!r.planes[p].collected) {
      out.push(`Not collected: ${r.planes[p].why}`, '');
      continue;
    }
    for (const pr of r.processes[p])
      out.push(
        `- **${pr.name}** (${pr.kind}, parent ${pr.parent}${pr.pid ? `, pid ${pr.pid}` : ''}${pr.state ? `, ${pr.state}` : ''}): ${Object.entries(
          pr.details,
        )
          .filter(([, v]) => v)
          .map(([k, v]) => `${k} ${v}`)
          .join('; ')} — from ${pr.source}`,
      );
    out.push('');
  }
  out.push(...procMarkdown(r.nodeProcs));
  out.push('## What k0s collapses into one process', '', r.k0sCollapse, '');
  out.push(...cisMarkdown(r));
  out.push(...nodeCisMarkdown(r.nodeCis));
  out.push(...upgradeMarkdown(r.upgrade));
  out.push(...k0sMarkdown(r));
  return out.join('\n');
}

function interesting(f: FlagRow): boolean {
  return f.class !== 'same';
}

export function summary(r: CompareReport, files: string[]): string {
  const out: string[] = [];
  out.push(`hardwire compare, Kubernetes ${r.kubernetesVersion}`);
  for (const p of PLANES)
    out.push(
      `  ${p.padEnd(9)} ${r.planes[p].collected ? 'collected' : 'NOT collected'}: ${r.planes[p].why}`,
    );
  out.push(...ttfpSummary(r.ttfp));
  for (const c of COMPONENTS) {
    const comp = r.components[c];
    out.push(
      '',
      `${c}: ${comp.counts.same} same, ${comp.counts.differs} differ, ${comp.counts.partial} only in some planes`,
    );
    for (const f of comp.flags.filter(interesting)) {
      out.push(
        `  ${f.class === 'differs' ? '≠' : '±'} --${f.name}: ${PLANES.filter(
          (p) => r.planes[p].collected,
        )
          .map((p) => `${p}=${cell(f.values[p])}`)
          .join('  ')}`,
      );
    }
  }
  out.push(...nodeSummary(r.node));
  const certDiff = r.certs.filter((c) => c.differs.length || c.matched === 'some');
  out.push('', `certificates: ${r.certs.length} roles, ${certDiff.length} with differences`);
  for (const c of certDiff) {
    const only = PLANES.filter((p) => r.planes[p].collected && c.planes[p] === null);
    out.push(
      `  ${c.role}: ${c.matched === 'some' ? `unmatched in ${only.join(', ')}` : ''}${c.matched === 'some' && c.differs.length ? '; ' : ''}${c.differs.length ? `differs in ${c.differs.join(', ')}` : ''}`,
    );
  }
  out.push(...kubeletCertsSummary(r));
  out.push(...endpointSummary(r));
  if (r.cis)
    out.push(
      '',
      `CIS ${Object.values(r.cis)[0]!.benchmark} (kube-bench), worst host of each plane: ${Object.entries(
        r.cis,
      )
        .map(([p, c]) => {
          const w = worstHost(c);
          return `${p} ${w.totals.PASS} PASS / ${w.totals.FAIL} FAIL / ${w.totals.WARN} WARN`;
        })
        .join(', ')}`,
    );
  out.push(...nodeCisSummary(r.nodeCis));
  out.push(...procSummary(r.nodeProcs));
  out.push(...upgradeSummary(r.upgrade));
  out.push('', r.k0sCollapse);
  if (files.length) out.push('', ...files.map((f) => `wrote ${f}`));
  return `${out.join('\n')}\n`;
}
