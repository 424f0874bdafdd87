// Every HTML report hardwire writes, read in Chromium at 1400 px (issue 40): no word in any table
// cell wraps mid-word. The reports are made by their real formatters from real data, with no lab:
// compare from the fixture of every mapped flag (test/helpers/compare-fixture.ts, with the committed
// proof records in its "proven live" column), upgrade plan from planFor on both example
// inventories, flags prove from the saved reports of test/fixtures/prove/ (etcd's a real run), and
// trace apply from the trace recorded in docs/flags.md, audit from hardwire's rendered units read as
// the audit reads a host (test/helpers/audit-fixture.ts), with an unknown flag and what each lacks. Drills, cis and certs write no HTML.
//
// The rule: a token is a run of text without whitespace in one line of a td or th (across inline
// elements and <wbr>; a <br> or a block ends it). It may go onto a second line only right after a
// `/`, `,` or `=` (a path, a list, a key=value: lib/html.ts's breakable marks these with <wbr>), never
// between two other characters, nor after a `-`. A token that does not fit its cell even so (a
// hash, a long word) must stay on one line and widen the cell or overflow it; breaking it is the
// failure this test is for.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withPage } from './helpers/chromium.ts';
import { fixtureReport } from './helpers/compare-fixture.ts';
import { recordedTrace } from './helpers/recorded-trace.ts';
import { tempDir } from './helpers/tmp.ts';
import { html as compareHtml } from '../harness/compare/html.ts';
import { formatHtml as proveHtml } from '../harness/prove/html.ts';
import { formatHtml as traceHtml } from '../harness/trace/html.ts';
import { formatHtml as planHtml } from '../core/upgrade/html.ts';
import { planFor } from '../core/upgrade/plan-for.ts';
import { formatHtml as auditHtml } from '../harness/audit/index.ts';
import { lacksOf } from '../harness/audit/lacks.ts';
import { auditPlan } from '../harness/audit/upgrade.ts';
import { renderedHosts, renderedReport } from './helpers/audit-fixture.ts';
import { loadValidInventory } from '../core/validate/inventory.ts';
import type { ProveReport } from '../harness/prove/index.ts';
import { repoRoot } from '../lib/paths.ts';

const prove = (c: string) =>
  JSON.parse(
    readFileSync(join(repoRoot, 'test', 'fixtures', 'prove', `${c}.json`), 'utf8'),
  ) as ProveReport;
const plan = (inv: string) =>
  planHtml(planFor(loadValidInventory(join(repoRoot, 'hosts', inv)), 'v1.37.2'));

const REPORTS: Record<string, () => string> = {
  compare: () => compareHtml(fixtureReport()),
  'upgrade plan example.yaml': () => plan('example.yaml'),
  'upgrade plan example-workers.yaml': () => plan('example-workers.yaml'),
  'flags prove etcd': () => proveHtml(prove('etcd')),
  'flags prove kube-scheduler': () => proveHtml(prove('kube-scheduler')),
  'trace apply': () => traceHtml(recordedTrace()),
  audit: () => {
    const r = renderedReport(renderedHosts(), ['--no-such-flag=1']);
    const inv = loadValidInventory(join(repoRoot, 'hosts', 'example-workers.yaml'));
    for (const h of r.hosts)
      for (const p of h.processes)
        p.lacks = lacksOf(inv, 'cp-0', { ...p, flags: p.flags.slice(2) });
    r.upgrade = auditPlan(r, 'v1.37.2');
    return auditHtml(r);
  },
};

/** In the page: every token of every td and th that goes onto another line where the rule forbids. */
function midWordWraps(skip: string): {
  cells: number;
  tokens: number;
  bad: string[];
  longest: string;
} {
  const BREAK_AFTER = '/,=';
  const inline = (el: Element | null, cell: Element) => {
    for (let e = el; e && e !== cell; e = e.parentElement)
      if (!getComputedStyle(e).display.startsWith('inline')) return e;
    return cell;
  };
  const where = (cell: Element) => {
    const table = cell.closest('table')!;
    const section = table.closest('section');
    const tid =
      table.id ||
      [
        section?.id,
        ...[...table.attributes].filter((a) => a.name.startsWith('data-')).map((a) => a.value),
      ]
        .filter(Boolean)
        .join(' ') ||
      table.className;
    const tr = cell.parentElement as HTMLTableRowElement;
    const row =
      tr.getAttribute('data-flag') ??
      tr.getAttribute('data-ref') ??
      tr.getAttribute('data-n') ??
      (tr.cells[0]?.textContent ?? '').slice(0, 40);
    return `${tid}/${row}`;
  };
  const bad: string[] = [];
  let cells = 0,
    tokens = 0,
    longest = '';
  for (const cell of Array.from(document.querySelectorAll('td, th'))) {
    if (!(cell as HTMLElement).offsetParent && getComputedStyle(cell).position !== 'sticky')
      continue;
    if (skip && cell.matches(skip)) continue;
    cells++;
    // The cell's text as [node, offset] per character, whitespace and line ends as separators.
    type Ch = { node: Text; i: number; c: string };
    const runs: Ch[][] = [[]];
    let prevNode: Text | undefined;
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT | NodeFilter.SHOW_ELEMENT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.nodeType === Node.ELEMENT_NODE) {
        if ((n as Element).tagName === 'BR') runs.push([]);
        continue;
      }
      const t = n as Text;
      if (prevNode && inline(prevNode.parentElement, cell) !== inline(t.parentElement, cell))
        runs.push([]);
      prevNode = t;
      for (let i = 0; i < t.data.length; i++) {
        const c = t.data[i]!;
        if (/\s/.test(c)) runs.push([]);
        else runs.at(-1)!.push({ node: t, i, c });
      }
    }
    for (const run of runs.filter((r) => r.length)) {
      tokens++;
      const text = run.map((x) => x.c).join('');
      if (text.length > longest.length) longest = text;
      const r = document.createRange();
      r.setStart(run[0]!.node, run[0]!.i);
      r.setEnd(run.at(-1)!.node, run.at(-1)!.i + 1);
      const tops = new Set(
        [...r.getClientRects()].filter((b) => b.width > 0).map((b) => Math.round(b.top)),
      );
      if (tops.size < 2) continue;
      // It spans lines: find each character that starts a new line, and what precedes it.
      const top = (x: Ch) => {
        const q = document.createRange();
        q.setStart(x.node, x.i);
        q.setEnd(x.node, x.i + 1);
        const b = [...q.getClientRects()].filter((b) => b.width > 0);
        return b.length ? Math.round(b[0]!.top) : undefined;
      };
      let last = top(run[0]!);
      for (let k = 1; k < run.length; k++) {
        const t = top(run[k]!);
        if (t === undefined || last === undefined || t <= last) {
          last = t ?? last;
          continue;
        }
        last = t;
        if (!BREAK_AFTER.includes(run[k - 1]!.c))
          bad.push(`${where(cell)}: ${text.slice(0, k)}⏎${text.slice(k)}`.slice(0, 300));
      }
    }
  }
  return { cells, tokens, bad, longest };
}

describe('HTML reports at 1400 px: no word in a table wraps mid-word', () => {
  it.each(Object.keys(REPORTS))(
    '%s',
    async (name) => {
      const dir = tempDir('hardwire-html-reports-');
      const file = join(dir, 'r.html');
      writeFileSync(file, REPORTS[name]!());
      const t0 = Date.now();
      const r = await withPage(file, async (page) => ({
        ...(await page.evaluate(midWordWraps, '')),
        scroll: await page.evaluate(() => document.documentElement.scrollWidth),
      }));
      console.log(
        `${name}: ${r.cells} cells, ${r.tokens} tokens (longest ${r.longest.length} chars), ${r.bad.length} mid-word wraps, ${r.scroll} px wide, ${Date.now() - t0} ms`,
      );
      expect(r.cells).toBeGreaterThan(20);
      // compare's fixture passes every mapped flag and may scroll sideways (test/compare-html.test.ts).
      if (name !== 'compare') expect(r.scroll).toBeLessThanOrEqual(1400);
      expect(r.bad.map((b) => `${name}: ${b}`)).toEqual([]);
    },
    300_000,
  );
});
