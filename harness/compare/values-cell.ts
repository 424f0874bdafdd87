// One table cell holding every plane's value, one line per plane, each with that plane's reason
// under it. Three planes side by side did not fit 1400 px without breaking a value mid-word (the
// real report was 2,095 px wide); stacked, with the reasons in the same column, it does, and a
// value wraps only after `/ , =` (lib/html.ts).
import { PLANES, type PlaneName } from '../planes/plane-names.ts';
import { esc } from '../../lib/html.ts';

export type PlaneValue = {
  text: string;
  absent: boolean;
  differs: boolean;
  raw?: string;
  /** The plane's reason for its value, as HTML (a link to the source it cites), under the value. */
  why?: string;
};

/** The header of the values column. */
export const VALUES_TH = `<th>${PLANES.join(' / ')}: value, and the plane's reason</th>`;

export function valuesCell(valueOf: (p: PlaneName) => PlaneValue): string {
  return `<td class="vals">${PLANES.map((p) => {
    const v = valueOf(p);
    const title = v.raw !== undefined && v.raw !== v.text ? ` title="raw: ${esc(v.raw)}"` : '';
    const value = v.absent ? `<span class="absent">${esc(v.text)}</span>` : esc(v.text);
    const why = v.why ? `<span class="why">${v.why}</span>` : '';
    return `<div data-plane="${p}"${v.differs ? ' class="d"' : ''}${title}><span class="pn">${p}</span><span class="v">${value}</span>${why}</div>`;
  }).join('')}</td>`;
}

/** The CSS of the values cell: the plane's name in a column of its own width, then the value, its reason under it. */
export const VALUES_STYLE =
  'td.vals>div{display:grid;grid-template-columns:5.5em auto} td.vals .pn{font-family:system-ui,sans-serif;color:#666} td.vals .why{grid-column:2;font-size:11px;color:#444;font-family:system-ui,sans-serif}';
