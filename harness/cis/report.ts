// kube-bench's JSON (`--json`: check.OverallControls in its check/controls.go) and what `hardwire cis`
// makes of it: counts per target, recounted from the checks themselves and compared with the totals
// kube-bench printed, and every check that did not pass, with kube-bench's own text and remediation.
import { StepError } from '../../lib/errors.ts';

export type Status = 'PASS' | 'FAIL' | 'WARN' | 'INFO';
export const STATUSES: readonly Status[] = ['PASS', 'FAIL', 'WARN', 'INFO'];

/** The fields of kube-bench's JSON that hardwire reads (names as kube-bench writes them). */
interface RawCheck {
  test_number: string;
  test_desc: string;
  status: Status;
  scored: boolean;
  remediation?: string;
  actual_value?: string;
  expected_result?: string;
  reason?: string;
  audit?: string;
  audit_config?: string;
}
interface RawGroup {
  section: string;
  desc: string;
  results: RawCheck[] | null;
}
interface RawControls {
  id: string;
  version: string;
  text: string;
  node_type: string;
  tests: RawGroup[] | null;
  total_pass: number;
  total_fail: number;
  total_warn: number;
  total_info: number;
}
export interface RawReport {
  Controls: RawControls[];
  Totals: { total_pass: number; total_fail: number; total_warn: number; total_info: number };
}

export interface Counts {
  PASS: number;
  FAIL: number;
  WARN: number;
  INFO: number;
}

export interface CheckResult {
  id: string;
  /** master, etcd, controlplane or node (kube-bench's node_type). */
  target: string;
  text: string;
  status: Status;
  scored: boolean;
  remediation: string;
  /** What the audit found, when kube-bench says (e.g. "permissions=644"). */
  actual: string;
  reason: string;
  /** The files kube-bench's audit commands name (audit and audit_config; the commands only, never their output). */
  paths?: string[];
}

export interface HostReport {
  host: string;
  roles: string[];
  targets: string[];
  /** Checks passed to kube-bench's --skip, with why (reported by kube-bench as INFO). */
  skipped: { ids: string[]; why: string } | undefined;
  byTarget: Record<string, Counts>;
  /** kube-bench's own Totals. */
  totals: Counts;
  /** The same, counted from the per-check results. */
  counted: Counts;
  checks: CheckResult[];
  seconds: number;
}

export const zero = (): Counts => ({ PASS: 0, FAIL: 0, WARN: 0, INFO: 0 });

export function add(a: Counts, b: Counts): Counts {
  return {
    PASS: a.PASS + b.PASS,
    FAIL: a.FAIL + b.FAIL,
    WARN: a.WARN + b.WARN,
    INFO: a.INFO + b.INFO,
  };
}

/** kube-bench's stdout as JSON, or a StepError naming what was wrong with it. */
export function parseReport(stdout: string, host: string): RawReport {
  // kube-bench prints the document on one line; anything else on stdout would be a warning.
  const line = stdout.split('\n').find((l) => l.startsWith('{"Controls"'));
  if (!line)
    throw new StepError('cis', 'kube-bench printed no JSON report', {
      host,
      detail: stdout.split('\n').slice(-8),
    });
  const doc = JSON.parse(line) as RawReport;
  if (!Array.isArray(doc.Controls) || typeof doc.Totals?.total_pass !== 'number')
    throw new StepError('cis', "kube-bench's JSON has no Controls or Totals", { host });
  return doc;
}

/**
 * kube-bench's audit output with key material taken out. Check 4.3.1 audits by `cat $proxykubeconfig`,
 * so on a worker whose kube-proxy kubeconfig embeds its client key, actual_value holds that key.
 */
export function redactKeys(text: string): string {
  return text
    .replace(
      /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g,
      '<a private key: redacted by hardwire>',
    )
    .replace(
      /^(\s*)(client-key-data|token|password):.*$/gm,
      '$1<a client key or token: redacted by hardwire>',
    );
}

/** Absolute paths in an audit command (`stat -c %a /var/lib/kubelet/config.yaml`), each once. */
export function auditPaths(audit: string): string[] {
  return [...new Set(audit.match(/\/(?:etc|var|run|lib|usr|opt|root)\/[^\s'";|)&]+/g) ?? [])];
}

export function summarize(
  raw: RawReport,
  meta: Pick<HostReport, 'host' | 'roles' | 'targets' | 'skipped' | 'seconds'>,
): HostReport {
  const checks: CheckResult[] = [];
  const byTarget: Record<string, Counts> = {};
  for (const c of raw.Controls) {
    const counts = (byTarget[c.node_type] ??= zero());
    for (const g of c.tests ?? []) {
      for (const r of g.results ?? []) {
        counts[r.status] += 1;
        checks.push({
          id: r.test_number,
          target: c.node_type,
          text: r.test_desc,
          status: r.status,
          scored: r.scored,
          remediation: (r.remediation ?? '').trim(),
          actual: redactKeys((r.actual_value ?? '').trim()),
          reason: redactKeys((r.reason ?? '').trim()),
          paths: auditPaths(`${r.audit ?? ''} ${r.audit_config ?? ''}`),
        });
      }
    }
  }
  const t = raw.Totals;
  return {
    ...meta,
    byTarget,
    checks,
    totals: { PASS: t.total_pass, FAIL: t.total_fail, WARN: t.total_warn, INFO: t.total_info },
    counted: Object.values(byTarget).reduce(add, zero()),
  };
}
