// `certs check`: reads the certificates that are actually on the hosts, over SSH, including the
// client certs embedded in kubeconfigs. Only the client-certificate-data line of a kubeconfig is
// read: the private key never leaves the host.
import { X509Certificate } from 'node:crypto';
import type { Inventory } from '../inventory/load.ts';
import { keyAlgorithmOf } from '../pki/issue.ts';
import type { ReadSession as Session } from '../transport/index.ts';
import { remoteCas, remoteCerts, type RemoteCa, type RemoteCert } from './catalog.ts';

export type CertStatus = 'ok' | 'EXPIRED' | 'NOT YET VALID' | 'MISSING' | 'UNREADABLE';

export interface CertRow {
  name: string;
  host: string;
  path: string;
  ca: string;
  status: CertStatus;
  notBefore?: string;
  notAfter?: string;
  /** notAfter - now; negative once expired. */
  residualMs?: number;
  residual: string;
  subject?: string;
  /** Signed by the CA file on the same host (undefined when either could not be read). */
  signedByHostCa?: boolean;
  fingerprint?: string;
  /** RSA-2048, ECDSA-P256...: kubeadm's spelling. */
  keyAlgorithm?: string;
  detail?: string;
}

export interface CaRow {
  name: string;
  host: string;
  path: string;
  status: CertStatus;
  notAfter?: string;
  residualMs?: number;
  residual: string;
  fingerprint?: string;
  keyAlgorithm?: string;
  detail?: string;
}

export interface CheckReport {
  at: string;
  /** The inventory's cluster.keyAlgorithm: a row whose key is another one is a problem. */
  keyAlgorithm: string;
  certs: CertRow[];
  cas: CaRow[];
}

/** kubeadm's ShortHumanDuration, with EXPIRED spelled out. */
export function residual(ms: number): string {
  if (ms <= 0) return 'EXPIRED';
  const s = Math.floor(ms / 1000);
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 120) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  if (d < 365 * 2) return `${d}d`;
  return `${Math.floor(d / 365)}y`;
}

/** EXPIRED, NOT YET VALID or ok at `now` (also audit's, for the certificates it reads). */
export function statusOf(x: X509Certificate, now: number): CertStatus {
  if (new Date(x.validTo).getTime() <= now) return 'EXPIRED';
  if (new Date(x.validFrom).getTime() > now) return 'NOT YET VALID';
  return 'ok';
}

async function readPem(
  s: Session,
  c: { path: string; embedded?: boolean },
): Promise<{ pem?: string; missing?: boolean; error?: string }> {
  if (c.embedded) {
    // Only this one line crosses the wire; client-key-data stays on the host.
    const r = await s.exec(['grep', '-m1', '-e', 'client-certificate-data:', c.path], {
      allowFail: true,
      timeoutMs: 15_000,
    });
    if (r.code === 2 && /No such file/.test(r.stderr)) return { missing: true };
    if (r.code !== 0)
      return {
        error: r.code === 1 ? 'no client-certificate-data in the kubeconfig' : r.stderr.trim(),
      };
    const b64 = r.stdout.slice(r.stdout.indexOf(':') + 1).trim();
    return { pem: Buffer.from(b64, 'base64').toString('utf8') };
  }
  const r = await s.exec(['cat', '--', c.path], { allowFail: true, timeoutMs: 15_000 });
  if (r.code !== 0)
    return /No such file/.test(r.stderr) ? { missing: true } : { error: r.stderr.trim() };
  return { pem: r.stdout };
}

function parse(pem: string): X509Certificate | undefined {
  try {
    return new X509Certificate(pem);
  } catch {
    return undefined;
  }
}

async function caRow(
  s: Session,
  c: RemoteCa,
  now: number,
): Promise<{ row: CaRow; x?: X509Certificate }> {
  const got = await readPem(s, c);
  const base = { name: c.name, host: c.host, path: c.path };
  if (got.missing) return { row: { ...base, status: 'MISSING', residual: '-' } };
  const x = got.pem ? parse(got.pem) : undefined;
  if (!x)
    return {
      row: {
        ...base,
        status: 'UNREADABLE',
        residual: '-',
        detail: got.error ?? 'does not parse as a PEM certificate',
      },
    };
  const ms = new Date(x.validTo).getTime() - now;
  return {
    row: {
      ...base,
      status: statusOf(x, now),
      notAfter: new Date(x.validTo).toISOString(),
      residualMs: ms,
      residual: residual(ms),
      fingerprint: x.fingerprint256,
      keyAlgorithm: keyAlgorithmOf(x.publicKey),
    },
    x,
  };
}

async function certRow(
  s: Session,
  c: RemoteCert,
  ca: X509Certificate | undefined,
  now: number,
): Promise<CertRow> {
  const got = await readPem(s, c);
  const base = { name: c.name, host: c.host, path: c.path, ca: c.ca };
  if (got.missing) return { ...base, status: 'MISSING', residual: '-' };
  const x = got.pem ? parse(got.pem) : undefined;
  if (!x)
    return {
      ...base,
      status: 'UNREADABLE',
      residual: '-',
      detail: got.error ?? 'does not parse as a PEM certificate',
    };
  const ms = new Date(x.validTo).getTime() - now;
  return {
    ...base,
    status: statusOf(x, now),
    notBefore: new Date(x.validFrom).toISOString(),
    notAfter: new Date(x.validTo).toISOString(),
    residualMs: ms,
    residual: residual(ms),
    subject: x.subject.replace(/\n/g, ', '),
    ...(ca ? { signedByHostCa: x.checkIssued(ca) && x.verify(ca.publicKey) } : {}),
    fingerprint: x.fingerprint256,
    keyAlgorithm: keyAlgorithmOf(x.publicKey),
  };
}

/** Reads every cert and CA hardwire installs, on every host (hosts in parallel). */
export async function checkHosts(
  inv: Inventory,
  sessions: Map<string, Session>,
  now = Date.now(),
): Promise<CheckReport> {
  const perHost = await Promise.all(
    inv.hosts.map(async (h) => {
      const s = sessions.get(h.name);
      if (!s) throw new Error(`no SSH session for ${h.name}`);
      const cas = await Promise.all(remoteCas(inv, h).map((c) => caRow(s, c, now)));
      const byName = new Map(cas.map((c) => [c.row.name, c.x]));
      const certs = await Promise.all(
        remoteCerts(inv, h).map((c) => certRow(s, c, byName.get(c.ca), now)),
      );
      return { certs, cas: cas.map((c) => c.row) };
    }),
  );
  const order = (a: { name: string; host: string }, b: { name: string; host: string }) =>
    a.name.localeCompare(b.name) || a.host.localeCompare(b.host);
  return {
    at: new Date(now).toISOString(),
    keyAlgorithm: inv.cluster.keyAlgorithm,
    certs: perHost.flatMap((p) => p.certs).sort(order),
    cas: perHost.flatMap((p) => p.cas).sort(order),
  };
}

function when(iso: string | undefined): string {
  if (!iso) return '-';
  const d = new Date(iso);
  const mon = d.toLocaleString('en-US', { month: 'short', timeZone: 'UTC' });
  const p = (n: number) => String(n).padStart(2, '0');
  return `${mon} ${p(d.getUTCDate())}, ${d.getUTCFullYear()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} UTC`;
}

function table(head: string[], rows: string[][]): string {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [head, ...rows]
    .map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(w[i]!))).join('   '))
    .join('\n');
}

function residualCell(r: { status: CertStatus; residual: string; residualMs?: number }): string {
  if (r.status === 'ok') return r.residual;
  if (r.status === 'EXPIRED')
    return `EXPIRED ${residual(-(r.residualMs ?? 0)).replace('EXPIRED', '0s')} ago`;
  return r.status;
}

/** "RSA-2048 (NOT ECDSA-P256)" when a key is not the inventory's algorithm. */
function keyCell(r: { keyAlgorithm?: string }, want: string): string {
  if (!r.keyAlgorithm) return '-';
  return r.keyAlgorithm === want ? r.keyAlgorithm : `${r.keyAlgorithm} (NOT ${want})`;
}

/** The text `certs check` prints: certificates, then the CAs, like kubeadm check-expiration. */
export function formatCheck(r: CheckReport): string {
  const certs = table(
    [
      'CERTIFICATE',
      'HOST',
      'EXPIRES',
      'RESIDUAL TIME',
      'CERTIFICATE AUTHORITY',
      'KEY ALGORITHM',
      'FILE',
    ],
    r.certs.map((c) => [
      c.name,
      c.host,
      when(c.notAfter),
      residualCell(c),
      `${c.ca}${c.signedByHostCa === false ? ' (NOT SIGNED BY IT)' : ''}`,
      keyCell(c, r.keyAlgorithm),
      `${c.path}${c.detail ? ` (${c.detail})` : ''}`,
    ]),
  );
  const cas = table(
    ['CERTIFICATE AUTHORITY', 'HOST', 'EXPIRES', 'RESIDUAL TIME', 'KEY ALGORITHM', 'FILE'],
    r.cas.map((c) => [
      c.name,
      c.host,
      when(c.notAfter),
      residualCell(c),
      keyCell(c, r.keyAlgorithm),
      `${c.path}${c.detail ? ` (${c.detail})` : ''}`,
    ]),
  );
  return `${certs}\n\n${cas}\n`;
}

export function problems(r: CheckReport): (CertRow | CaRow)[] {
  return [...r.certs, ...r.cas].filter(
    (x) =>
      x.status !== 'ok' ||
      ('signedByHostCa' in x && x.signedByHostCa === false) ||
      (x.keyAlgorithm !== undefined && x.keyAlgorithm !== r.keyAlgorithm),
  );
}
