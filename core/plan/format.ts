// The dry-run text: per host, in inventory order, files then units. Deterministic.
import type { Plan } from './types.ts';

export function formatPlan(plan: Plan): string {
  if (plan.noop)
    return 'no changes: every host matches the rendered tree and every unit is running\n';
  const out: string[] = [];
  for (const h of plan.hosts) {
    out.push(`${h.host}:`);
    if (h.changes.length === 0) out.push('  files: unchanged');
    for (const c of h.changes)
      out.push(
        `  ${c.reason === 'missing' ? '+' : '~'} ${c.path} (${c.reason === 'mode' ? 'only its mode differs, ' : ''}${c.kind}${c.arch ? ` for ${c.arch}` : ''}, mode ${c.mode.toString(8).padStart(4, '0')}${c.readBy.length ? `, read by ${c.readBy.join(', ')}` : ''})`,
      );
    if (h.daemonReload) out.push('  ! systemctl daemon-reload');
    for (const u of h.units) {
      if (u.action === 'none' && u.reasons.length === 0) continue;
      out.push(
        `  ${u.action === 'none' ? '=' : '>'} ${u.action} ${u.component}${u.reasons.length ? `: ${u.reasons.join('; ')}` : ''}`,
      );
    }
  }
  return `${out.join('\n')}\n`;
}
