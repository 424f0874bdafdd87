// compare's kubelet-certificates section: each plane's kubelet certs (planes/kubelet-certs.ts) as
// rows, Markdown, HTML and the summary lines.
import { PLANES, type KubeletCerts, type PlaneData, type PlaneName } from '../planes/types.ts';
import type { CompareReport } from './types.ts';
import { mdCell } from '../../lib/markdown.ts';

/** The report's per-plane entry: the certs, or why there are none. */
export function kubeletCertsSection(
  planes: Record<PlaneName, PlaneData>,
): CompareReport['kubeletCerts'] {
  return Object.fromEntries(
    PLANES.map((p) => [
      p,
      planes[p].kubeletCerts ?? {
        none: !planes[p].collected ? 'not collected' : planes[p].node ? 'not read' : 'no worker',
      },
    ]),
  ) as CompareReport['kubeletCerts'];
}

const has = (v: KubeletCerts | { none: string }): v is KubeletCerts => !('none' in v);

const clientText = (c: KubeletCerts['client']) =>
  `${c.subject}; issuer ${c.issuer}; ${c.notBefore.slice(0, 10)}..${c.notAfter.slice(0, 10)} (${c.validityDays}d); ${c.embedded ? `embedded in ${c.file}` : c.file}${c.linkTarget ? ` -> ${c.linkTarget} (rotated)` : ''}`;
const servingText = (c: KubeletCerts['serving']) =>
  `${c.subject}; issuer ${c.issuer}; ${c.validityDays}d; ${c.file}; ${c.selfSigned ? 'self-signed by the kubelet' : c.signedByClusterCa ? 'signed by the cluster CA' : 'other issuer'}`;

/** Rows of the kubelet-certificates table: one per plane, as [plane, client, serving, apiserver flag, verdict]. */
export function kubeletCertRows(r: CompareReport): string[][] {
  return PLANES.map((p) => {
    const v = r.kubeletCerts[p];
    if (!has(v)) return [p, v.none, v.none, '', ''];
    return [
      p,
      clientText(v.client),
      servingText(v.serving),
      `${v.apiserverKubeletCa ?? 'absent'} (${v.apiserverArgvSource})`,
      v.verdict,
    ];
  });
}

export const KUBELET_CERT_HEAD = [
  'plane',
  'kubelet client cert',
  'kubelet serving cert',
  'apiserver --kubelet-certificate-authority',
  'what it means',
];

export function kubeletCertsMarkdown(r: CompareReport): string[] {
  const esc = mdCell;
  return [
    '## Kubelet certificates',
    '',
    `| ${KUBELET_CERT_HEAD.join(' | ')} |`,
    `|${KUBELET_CERT_HEAD.map(() => '---').join('|')}|`,
    ...kubeletCertRows(r).map((row) => `| ${row.map(esc).join(' | ')} |`),
    '',
  ];
}

export function kubeletCertsSummary(r: CompareReport): string[] {
  return [
    '',
    'kubelet serving certs:',
    ...PLANES.map((p) => {
      const v = r.kubeletCerts[p];
      return `  ${p}: ${has(v) ? v.verdict : v.none}`;
    }),
  ];
}

export function kubeletCertsHtml(r: CompareReport, esc: (s: string) => string): string {
  return `<h2>Kubelet certificates</h2><table class="sortable" id="kubelet-certs"><thead><tr>${KUBELET_CERT_HEAD.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>
${kubeletCertRows(r)
  .map((row) => `<tr data-plane="${row[0]}">${row.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`)
  .join('\n')}</tbody></table>`;
}
