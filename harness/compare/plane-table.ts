// A per-plane table (one row per plane, its first cell the plane's name) as Markdown and as HTML.
import { mdCell } from '../../lib/markdown.ts';
import { PLANES, type PlaneData, type PlaneName } from '../planes/types.ts';

/** What each plane's worker gave, or why there is nothing: not collected, no worker, or not read. */
export function fromWorkers<T>(
  planes: Record<PlaneName, PlaneData>,
  pick: (p: PlaneData) => T | undefined,
): Record<PlaneName, T | { none: string }> {
  return Object.fromEntries(
    PLANES.map((p) => [
      p,
      pick(planes[p]) ?? {
        none: !planes[p].collected ? 'not collected' : planes[p].node ? 'not read' : 'no worker',
      },
    ]),
  ) as Record<PlaneName, T | { none: string }>;
}

export function planeTableMarkdown(title: string, head: string[], rows: string[][]): string[] {
  return [
    `## ${title}`,
    '',
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.map(mdCell).join(' | ')} |`),
    '',
  ];
}

export function planeTableHtml(
  title: string,
  id: string,
  head: string[],
  rows: string[][],
  esc: (s: string) => string,
): string {
  return `<h2>${esc(title)}</h2><table class="sortable" id="${id}"><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>
${rows.map((row) => `<tr data-plane="${row[0]}">${row.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`).join('\n')}</tbody></table>`;
}
