// compare's kubelet-certificates section: each plane's kubelet certs (planes/kubelet-certs.ts) as
// rows, Markdown, HTML and the summary lines.
import { PLANES, type KubeletCerts, type PlaneData, type PlaneName } from '../planes/types.ts';
import type { CompareReport } from './types.ts';
import { fromWorkers, planeTableHtml, planeTableMarkdown } from './plane-table.ts';

/** The report's per-plane entry: the certs, or why there are none. */
export function kubeletCertsSection(
  planes: Record<PlaneName, PlaneData>,
): CompareReport['kubeletCerts'] {
  return fromWorkers(planes, (p) => p.kubeletCerts);
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
  return planeTableMarkdown('Kubelet certificates', KUBELET_CERT_HEAD, kubeletCertRows(r));
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
  return planeTableHtml(
    'Kubelet certificates',
    'kubelet-certs',
    KUBELET_CERT_HEAD,
    kubeletCertRows(r),
    esc,
  );
}
