// What every HTML report hardwire writes shares (compare, upgrade plan, flags prove): escaping,
// links to upstream source, the page shell and the sortable tables. Each page is one self-contained
// file: no external CSS, JS or fonts.

export const esc = (s: string): string =>
  s
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;');

/**
 * Where a page's text may wrap: at whitespace, and inside a word only right after a `/`, `,` or
 * `=` (a `<wbr>` there). A piece holding any other character a browser breaks at (a `-`, a `(`)
 * is kept whole in a `span.nw`, so `kube-apiserver` or `2026-12-05` never splits. A word too long
 * for its cell even so widens the cell rather than breaking: the reports set no
 * `overflow-wrap:anywhere` on table cells. Applied to the escaped body text between tags. Chromium
 * breaks at a `<wbr>` even under `white-space:nowrap`: a cell that must stay on one line hides them.
 */
export function breakable(body: string): string {
  const word = (w: string) =>
    w
      .split(/(?<=[/,=])(?=.)/)
      .map((c) => (/[^\w.:@/,=]/.test(c) ? `<span class="nw">${c}</span>` : c))
      .join('<wbr>');
  return body.replace(/>([^<]+)</g, (_, text: string) => `>${text.replace(/\S+/g, word)}<`);
}

/** A link only to an https URL (a citation at its tag); anything else stays text. */
export const link = (text: string, url: string | undefined): string =>
  url && /^https:\/\//.test(url) ? `<a href="${esc(url)}">${esc(text)}</a>` : esc(text);

/** Sorts a `table.sortable` on a header click (numbers as numbers); a second click reverses. */
export const SORT_SCRIPT = `
document.querySelectorAll('table.sortable th').forEach(function (th) {
  th.addEventListener('click', function () {
    var i = th.cellIndex;
    var table = th.closest('table'), body = table.tBodies[0];
    var asc = th.getAttribute('data-dir') !== 'asc';
    table.querySelectorAll('th').forEach(function (h) { h.removeAttribute('data-dir'); });
    th.setAttribute('data-dir', asc ? 'asc' : 'desc');
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[i].textContent.trim(), y = b.cells[i].textContent.trim();
      return (asc ? 1 : -1) * x.localeCompare(y, undefined, { numeric: true });
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});`;

/** The header arrows of a sortable table. */
export const SORT_STYLE =
  'th[data-dir=asc]::after{content:" ▲"} th[data-dir=desc]::after{content:" ▼"}';

export function htmlPage(p: {
  title: string;
  style: string;
  body: string;
  script?: string;
}): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(p.title)}</title><style>${p.style}
.nw{white-space:nowrap}</style></head>
<body>
${breakable(p.body)}
${p.script ? `<script>${p.script}</script>\n` : ''}</body></html>
`;
}

/** A page's markup without what `breakable` added: for reading the text a test expects. */
export function unbroken(page: string): string {
  return page.replace(/<wbr>/g, '').replace(/<span class="nw">([^<]*)<\/span>/g, '$1');
}
