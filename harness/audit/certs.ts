// The certificates a host's processes name in their flags and config files: read as the process
// sees them (/proc/<pid>/root), checked for expiry and for which named CA signed each. Only
// CERTIFICATE blocks are kept; a flag or field whose name says key is never read.
import { X509Certificate } from 'node:crypto';
import type { AuditCert, AuditFlag } from './types.ts';
import { statusOf } from '../../core/certs/check.ts';

const NAMES_A_CERT = /(cert|ca)-?file$|cafile$|certificate(-authority)?$/i;

/** The cert files a process's flags and config fields name. */
export function certPaths(
  flags: AuditFlag[],
  fields: AuditFlag[],
): { path: string; namedBy: string }[] {
  const out = new Map<string, string>();
  for (const [prefix, rows] of [
    ['--', flags],
    ['', fields],
  ] as const)
    for (const r of rows)
      if (NAMES_A_CERT.test(r.name) && !/key/i.test(r.name) && r.value.startsWith('/'))
        if (!out.has(r.value)) out.set(r.value, `${prefix}${r.name}`);
  return [...out].map(([path, namedBy]) => ({ path, namedBy }));
}

/** The PEM CERTIFICATE blocks of a file's text, and nothing else of it. */
export function certBlocks(text: string): string[] {
  return text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

const DAY = 86_400_000;

/** A file a flag names as a certificate that holds none, or one that does not parse: a problem row. */
function unreadable(path: string, namedBy: string, problem: string): AuditCert {
  const none = '(none)';
  return {
    path,
    namedBy,
    subject: none,
    issuer: none,
    notAfter: '',
    daysLeft: 0,
    sans: [],
    isCa: false,
    problems: [problem],
  };
}

/** Each file's first certificate, with the CA among the files that signed it. */
export function checkCerts(
  files: { path: string; namedBy: string; pem: string }[],
  now = new Date(),
): AuditCert[] {
  const bad: AuditCert[] = [];
  const parsed = files.flatMap((f) => {
    const first = certBlocks(f.pem)[0];
    if (!first) {
      bad.push(unreadable(f.path, f.namedBy, 'no PEM CERTIFICATE block in the file'));
      return [];
    }
    try {
      return [{ ...f, x: new X509Certificate(first) }];
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      bad.push(unreadable(f.path, f.namedBy, `its certificate does not parse (${why})`));
      return [];
    }
  });
  return [
    ...parsed.map(({ path, namedBy, x }) => {
      // As certs check decides it: issued by the CA's name and keys, and its signature verifies.
      const ca = parsed.find((c) => c.x.ca && x.checkIssued(c.x) && x.verify(c.x.publicKey));
      const notAfter = new Date(x.validTo);
      const daysLeft = Math.floor((notAfter.getTime() - now.getTime()) / DAY);
      const problems: string[] = [];
      const status = statusOf(x, now.getTime());
      if (status !== 'ok') problems.push(status.toLowerCase());
      else if (daysLeft < 30) problems.push(`expires in ${daysLeft} days`);
      if (!ca) problems.push('signed by no CA file a process on this host names');
      const one = (n: string) => n.split('\n').join(', ');
      return {
        path,
        namedBy,
        subject: one(x.subject),
        issuer: one(x.issuer),
        notAfter: notAfter.toISOString(),
        daysLeft,
        sans: (x.subjectAltName ?? '').split(', ').filter(Boolean),
        isCa: x.ca,
        ...(ca ? { signedBy: ca.path } : {}),
        problems,
      };
    }),
    ...bad,
  ];
}
