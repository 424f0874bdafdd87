// One table cell holding every plane's value, one line per plane. Three planes side by side did
// not fit 1400 px without breaking a value mid-word (the real report was 2,095 px wide); stacked,
// the cell is as wide as its longest value, and a value wraps only after `/ , =` (lib/html.ts).
import { PLANES, type PlaneName } from '../planes/plane-names.ts';
import { esc } from '../../lib/html.ts';

export type PlaneValue = { text: string; absent: boolean; differs: boolean; raw?: string };

/** The header of the values column. */
export const VALUES_TH = `<th>${PLANES.join(' / ')}</th>`;

export function valuesCell(value: (p: PlaneName) => PlaneValue): string {
  return `<td class="vals">${PLANES.map((p) => {
    const v = value(p);
    const title = v.raw !== undefined && v.raw !== v.text ? ` title="raw: ${esc(v.raw)}"` : '';
    const body = v.absent ? `<span class="absent">${esc(v.text)}</span>` : esc(v.text);
    return `<div data-plane="${p}"${v.differs ? ' class="d"' : ''}${title}><span class="pn">${p}</span><span class="v">${body}</span></div>`;
  }).join('')}</td>`;
}

/** The CSS of the values cell: the plane's name in a column of its own width, then the value. */
export const VALUES_STYLE =
  'td.vals>div{display:grid;grid-template-columns:5.5em auto} td.vals .pn{font-family:system-ui,sans-serif;color:#666}';
