// The plan as text (one table per component), Markdown and the JSON document.
import { blocking, type ComponentPlan, type PlanRow } from './plan.ts';

export interface PlanDoc {
  from: string;
  to: string;
  blocking: number;
  components: ComponentPlan[];
}

export function planDoc(from: string, to: string, components: ComponentPlan[]): PlanDoc {
  return { from, to, blocking: blocking(components).length, components };
}

function cells(r: PlanRow): string[] {
  const to = r.to?.registeredAt ?? (r.renamedTo ? `→ --${r.renamedTo.flag} ${r.renamedTo.registeredAt ?? ''}`.trim() : '(not registered)');
  return [`--${r.flag}`, r.status, r.from?.registeredAt ?? '(not registered)', to, r.note];
}

const HEAD = ['flag', 'status', 'registered at (from)', 'registered at (to)', 'note'];

function table(rows: string[][]): string {
  const widths = HEAD.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd()).join('\n');
}

function counts(p: ComponentPlan): string {
  const by = new Map<string, number>();
  for (const r of p.rows) by.set(r.status, (by.get(r.status) ?? 0) + 1);
  return [...by].map(([s, n]) => `${n} ${s}`).join(', ');
}

export function formatText(doc: PlanDoc): string {
  const out: string[] = [`upgrade plan ${doc.from} → ${doc.to}: flags each unit passes, checked in each binary's flag set at both versions`];
  for (const p of doc.components) {
    out.push('', `${p.component} ${p.fromVersion} → ${p.toVersion} (${counts(p)})`, table([HEAD, ...p.rows.map(cells)]));
  }
  out.push('', doc.blocking === 0 ? 'no flag the units pass is removed at the target' : `${doc.blocking} flag(s) the units pass would stop a component at ${doc.to}`);
  return `${out.join('\n')}\n`;
}

function md(c: string): string {
  return c.replace(/\|/g, '\\|');
}

export function formatMarkdown(doc: PlanDoc): string {
  const out: string[] = [`# Upgrade plan ${doc.from} → ${doc.to}`, '', `Blocking flags: ${doc.blocking}`];
  for (const p of doc.components) {
    out.push('', `## ${p.component} ${p.fromVersion} → ${p.toVersion}`, '', `| ${HEAD.join(' | ')} |`, `|${HEAD.map(() => '---').join('|')}|`);
    for (const r of p.rows) out.push(`| ${cells(r).map((c, i) => (i === 2 || i === 3) && c.includes('@') ? `\`${md(c)}\`` : md(c)).join(' | ')} |`);
  }
  return `${out.join('\n')}\n`;
}
