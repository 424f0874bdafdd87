// `hardwire cis` output: a table of counts per host and target, then every check that did not
// pass, once, with the hosts it did not pass on and kube-bench's own text and remediation.
import { add, STATUSES, zero, type CheckResult, type Counts, type HostReport } from './report.ts';

export interface PlaneReport {
  plane: string;
  benchmark: string;
  kubeBench: { version: string; sha256: string; source: string; origin: string };
  hosts: HostReport[];
  totals: Counts;
}

interface Finding {
  check: CheckResult;
  hosts: string[];
}

/** Non-PASS checks, FAIL first, then by id; each with the hosts it came out that way on. */
export function findings(r: PlaneReport): Finding[] {
  const byKey = new Map<string, Finding>();
  for (const h of r.hosts) {
    for (const c of h.checks.filter((x) => x.status !== 'PASS')) {
      const key = `${c.status} ${c.id}`;
      const f = byKey.get(key);
      if (f) f.hosts.push(h.host);
      else byKey.set(key, { check: c, hosts: [h.host] });
    }
  }
  const rank: Record<CheckResult['status'], number> = { FAIL: 0, WARN: 1, INFO: 2, PASS: 3 };
  const num = (id: string) =>
    id
      .split('.')
      .map((n) => n.padStart(3, '0'))
      .join('.');
  return [...byKey.values()].sort(
    (a, b) =>
      rank[a.check.status] - rank[b.check.status] || num(a.check.id).localeCompare(num(b.check.id)),
  );
}

function rows(h: HostReport): [string, Counts][] {
  const order = ['master', 'etcd', 'controlplane', 'node'];
  const names = Object.keys(h.byTarget).sort((a, b) => order.indexOf(a) - order.indexOf(b));
  return [...names.map((t) => [t, h.byTarget[t]!] as [string, Counts]), ['total', h.totals]];
}

/** kube-bench's remediations say "edit the pod specification file"; with hardwire that file is rendered. */
const REMEDY =
  'with hardwire, change the component model or the inventory\'s cluster.extraArgs and run "hardwire wire", which renders the unit';

/** What the audit found, when it is short enough to read: a `ps` line with every flag is not. */
function found(c: CheckResult): string {
  const first = c.actual.split('\n')[0] ?? '';
  return first && first.length <= 120 ? `; found: ${first}` : '';
}

const indent = (text: string, pad: string) =>
  text
    .split('\n')
    .map((l) => `${pad}${l}`)
    .join('\n');

export function formatText(r: PlaneReport): string {
  const out: string[] = [
    `CIS Kubernetes Benchmark ${r.benchmark} with kube-bench ${r.kubeBench.version} (${r.kubeBench.source}, sha256 ${r.kubeBench.sha256.slice(0, 16)}…)`,
    '',
  ];
  for (const h of r.hosts) {
    out.push(
      `plane ${r.plane} · ${h.host} (${h.roles.join(', ')}) · targets ${h.targets.join(',')} · ${h.seconds} s`,
    );
    out.push(`  ${'target'.padEnd(14)}${STATUSES.map((s) => s.padStart(6)).join('')}`);
    for (const [t, c] of rows(h))
      out.push(`  ${t.padEnd(14)}${STATUSES.map((s) => String(c[s]).padStart(6)).join('')}`);
    if (h.skipped) out.push(`  skipped ${h.skipped.ids.join(', ')}: ${h.skipped.why}`);
    out.push('');
  }
  if (r.hosts.length > 1)
    out.push(
      `plane ${r.plane}, ${r.hosts.length} hosts: ${STATUSES.map((s) => `${r.totals[s]} ${s}`).join(', ')}`,
      '',
    );
  const fs = findings(r);
  out.push(
    fs.length === 0
      ? 'every check passed'
      : `${fs.length} checks did not pass (kube-bench's text and remediation; ${REMEDY}):`,
  );
  for (const f of fs) {
    out.push(
      '',
      `${f.check.status.padEnd(5)} ${f.check.id} ${f.check.text}${f.check.scored ? '' : ' [not scored]'}`,
    );
    out.push(
      `      on ${f.hosts.join(', ')}${found(f.check)}${f.check.reason ? `; ${f.check.reason}` : ''}`,
    );
    if (f.check.remediation) out.push(indent(f.check.remediation, '      '));
  }
  return `${out.join('\n')}\n`;
}

export function formatMarkdown(r: PlaneReport): string {
  const out = [
    `# CIS Kubernetes Benchmark ${r.benchmark}: ${r.plane}`,
    '',
    `kube-bench ${r.kubeBench.version} (${r.kubeBench.source}, sha256 \`${r.kubeBench.sha256}\`).`,
    '',
    `| host | target | ${STATUSES.join(' | ')} |`,
    `|---|---|${STATUSES.map(() => '---:').join('|')}|`,
  ];
  for (const h of r.hosts)
    for (const [t, c] of rows(h))
      out.push(`| ${h.host} | ${t} | ${STATUSES.map((s) => c[s]).join(' | ')} |`);
  const skipped = r.hosts.filter((h) => h.skipped);
  if (skipped.length > 0)
    out.push(
      '',
      ...skipped.map(
        (h) => `Skipped on ${h.host}: ${h.skipped!.ids.join(', ')} (${h.skipped!.why}).`,
      ),
    );
  out.push(
    '',
    '## Checks that did not pass',
    '',
    `kube-bench's own text and remediation; ${REMEDY}.`,
    '',
  );
  const fs = findings(r);
  if (fs.length === 0) out.push('None.');
  for (const f of fs) {
    out.push(
      `### ${f.check.status} ${f.check.id}: ${f.check.text}`,
      '',
      `${f.check.scored ? 'Scored' : 'Not scored'}; on ${f.hosts.join(', ')}${found(f.check)}.`,
      '',
    );
    if (f.check.remediation) out.push('```', f.check.remediation, '```', '');
  }
  return `${out.join('\n').trimEnd()}\n`;
}

export function planeTotals(hosts: HostReport[]): Counts {
  return hosts.map((h) => h.totals).reduce(add, zero());
}
