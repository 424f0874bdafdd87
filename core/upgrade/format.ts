// The plan as text (one table per component), Markdown and the JSON document.
import { blocking, type ComponentPlan, type PlanRow } from './plan.ts';
import type { GatePlan, GateRow } from './gates.ts';
import type { FieldRow } from './fields.ts';
import { unsetDefaultsLine } from './field-defaults.ts';
import type { NewGroup, NewRow } from './new.ts';
import type { Hop } from './etcd.ts';
import type { Step } from './order.ts';
import type { Live } from './live.ts';
import { LIVE_HEAD, liveBlocking, liveRows, liveTitle } from './live-format.ts';

export interface PlanDoc {
  from: string;
  to: string;
  /** Flags, config fields and feature gates that would stop a component (or drop a setting) at the target. */
  blocking: number;
  components: ComponentPlan[];
  gates: GatePlan[];
  /** Flags and config fields the target's binaries have and the source's do not: never blocking. */
  new: NewGroup[];
  /** Each hop says which two committed maps its etcd table (in `components`, one per hop) was checked in. */
  etcd: { from: string; to: string; toCite: string; hops: (Hop & { flags: string })[] };
  order: Step[];
  /** The live checks (verify's gates, stored objects in removed APIs), or why they were skipped. */
  live?: Live;
}

export function planDoc(d: Omit<PlanDoc, 'blocking'>): PlanDoc {
  const gates = d.gates.flatMap((g) => g.rows).filter((r) => r.blocking).length;
  return {
    ...d,
    blocking: blocking(d.components).length + gates + liveBlocking(d.live),
    components: d.components,
  };
}

function cells(r: PlanRow): string[] {
  const to =
    r.to?.registeredAt ??
    (r.renamedTo
      ? `→ --${r.renamedTo.flag} ${r.renamedTo.registeredAt ?? ''}`.trim()
      : '(not registered)');
  return [`--${r.flag}`, r.status, r.from?.registeredAt ?? '(not registered)', to, r.note];
}

export const HEAD = ['flag', 'status', 'registered at (from)', 'registered at (to)', 'note'];
export const GATE_HEAD = ['feature gate', 'status', 'spec at (from)', 'spec at (to)', 'note'];
export const FIELD_HEAD = [
  'config field',
  'status',
  'declared at (from)',
  'declared at (to)',
  'note',
];

export const NEW_HEAD = ['new at the target', 'kind', 'registered at (to)', 'recommended', 'note'];

function newCells(r: NewRow): string[] {
  const rec = r.recommended
    ? `yes: replaces --${r.recommended.replaces}${r.recommended.passed ? ' (the unit passes it)' : ''}, deprecated at ${r.recommended.version} (registered at ${r.recommended.registeredAt ?? 'unknown'}): "${r.recommended.message}"`
    : 'no';
  return [
    r.kind === 'flag' ? `--${r.name}` : r.name,
    r.kind,
    r.registeredAt ?? '(no registration found)',
    rec,
    `${r.hidden ? 'hidden; ' : ''}${r.help}`,
  ];
}

/** The new-at-the-target group: one table per component with anything new. */
export function newTables(doc: PlanDoc): { component: string; title: string; rows: string[][] }[] {
  return doc.new.map((g) => ({
    component: g.component,
    title: `${g.component} ${g.toVersion}: new, not blocking`,
    rows: g.rows.map(newCells),
  }));
}

function fieldCells(r: FieldRow): string[] {
  const to =
    r.to?.registeredAt ??
    (r.renamedTo
      ? `→ ${r.renamedTo.key} ${r.renamedTo.registeredAt}`
      : `(absent from ${r.absentFrom ?? 'the target'})`);
  return [r.key, r.status, r.from?.registeredAt ?? '(not declared)', to, r.note];
}

export function gateCells(r: GateRow): string[] {
  const to = r.to?.at ?? `(absent from ${r.searched?.join(', ') ?? 'the target'})`;
  return [
    `${r.gate}=${r.values.join('|')}`,
    `${r.status}${r.blocking ? ' (blocking)' : ''}`,
    r.from?.at ?? '(not registered)',
    to,
    r.note,
  ];
}

/**
 * Rows of the text, Markdown and HTML forms: per table the flags, then the component's gate rows
 * (etcd's, one table per hop, each with the gates checked at that hop's ends).
 */
export function componentTables(doc: PlanDoc): {
  component: string;
  title: string;
  counts: string;
  flags: string[][];
  fields: string[][];
  gates: string[][];
  unsetDefaults?: string;
}[] {
  return doc.components.map((p) => ({
    component: p.component,
    title: `${p.component} ${p.fromVersion} → ${p.toVersion}`,
    counts: counts(p),
    flags: p.rows.map(cells),
    fields: p.fields.map(fieldCells),
    gates: (
      doc.gates.find(
        (g) =>
          g.component === p.component &&
          (g.toVersion === undefined ||
            (g.fromVersion === p.fromVersion && g.toVersion === p.toVersion)),
      )?.rows ?? []
    ).map(gateCells),
    ...(p.unsetDefaults ? { unsetDefaults: unsetDefaultsLine(p.unsetDefaults, p.toVersion) } : {}),
  }));
}

function table(head: string[], rows: string[][]): string {
  const all = [head, ...rows];
  const widths = head.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return all
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function counts(p: ComponentPlan): string {
  const by = new Map<string, number>();
  for (const r of [...p.rows, ...p.fields]) by.set(r.status, (by.get(r.status) ?? 0) + 1);
  return [...by].map(([s, n]) => `${n} ${s}`).join(', ');
}

export function pathLines(doc: PlanDoc): string[] {
  const out = [`etcd ${doc.etcd.from} → ${doc.etcd.to} (target: ${doc.etcd.toCite})`];
  doc.etcd.hops.forEach((h, i) => {
    out.push(`  hop ${i + 1}: ${h.from} → ${h.to}`);
    for (const r of h.rules) out.push(`    rule: ${r.text}`, `      ${r.cite}`);
    out.push(`    etcd flags: ${h.flags}`);
  });
  out.push('order:');
  doc.order.forEach((s, i) =>
    out.push(`  ${i + 1}. ${s.components.join(', ')}: ${s.rule}`, `     ${s.cite}`),
  );
  return out;
}

/** The live section as text: its title, then the removed APIs' table (plan's text form and apply's dry run). */
export function liveText(live: Live, to: string): string[] {
  return [liveTitle(live, to), ...(live.checked ? [table(LIVE_HEAD, liveRows(live))] : [])];
}

export function formatText(doc: PlanDoc): string {
  const out: string[] = [
    `upgrade plan ${doc.from} → ${doc.to}: flags, config fields and feature gates each unit passes, checked in each binary's own sets at both versions`,
  ];
  for (const t of componentTables(doc)) {
    out.push('', `${t.title} (${t.counts})`, table(HEAD, t.flags));
    if (t.fields.length) out.push('', table(FIELD_HEAD, t.fields));
    if (t.unsetDefaults) out.push('', t.unsetDefaults);
    if (t.gates.length) out.push('', table(GATE_HEAD, t.gates));
  }
  for (const t of newTables(doc)) out.push('', t.title, table(NEW_HEAD, t.rows));
  if (doc.live) out.push('', ...liveText(doc.live, doc.to));
  out.push('', ...pathLines(doc));
  out.push(
    '',
    `${doc.blocking === 0 ? 'no flag, config field, feature gate or stored object breaks at the target' : `${doc.blocking} flag(s), config field(s), feature gate(s) or removed API(s) with stored objects would stop a component, drop a setting or lose its API at ${doc.to}`}`,
  );
  return `${out.join('\n')}\n`;
}

function md(c: string): string {
  return c.replace(/\|/g, '\\|');
}

function mdRows(head: string[], rows: string[][]): string[] {
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map(
      (r) =>
        `| ${r.map((c, i) => ((i === 2 || i === 3) && c.includes('@') ? `\`${md(c)}\`` : md(c))).join(' | ')} |`,
    ),
  ];
}

export function formatMarkdown(doc: PlanDoc): string {
  const out: string[] = [`# Upgrade plan ${doc.from} → ${doc.to}`, '', `Blocking: ${doc.blocking}`];
  for (const t of componentTables(doc)) {
    out.push('', `## ${t.title}`, '', ...mdRows(HEAD, t.flags));
    if (t.fields.length) out.push('', ...mdRows(FIELD_HEAD, t.fields));
    if (t.unsetDefaults) out.push('', md(t.unsetDefaults));
    if (t.gates.length) out.push('', ...mdRows(GATE_HEAD, t.gates));
  }
  for (const t of newTables(doc)) out.push('', `## ${t.title}`, '', ...mdRows(NEW_HEAD, t.rows));
  if (doc.live)
    out.push(
      '',
      '## Live cluster',
      '',
      liveTitle(doc.live, doc.to),
      ...(doc.live.checked ? ['', ...mdRows(LIVE_HEAD, liveRows(doc.live))] : []),
    );
  out.push('', '## etcd path and component order', '', '```', ...pathLines(doc), '```');
  return `${out.join('\n')}\n`;
}
