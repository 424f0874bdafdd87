// `hardwire flags prove --html` (issue 25), read in headless Chromium at 1400 px: the page renders a
// saved report (--report) with no lab. Two fixtures: etcd.json is the report of a real run
// (`flags prove --component etcd --json` on a 1-host lab, 2026-12-03: 19 flags, 133 sites, a first boot), and
// kube-scheduler.json a small hand-made one whose sites are the flag map's own citations, with one
// flag of each verdict and a site of each status. What the page shows is checked against the JSON
// and against the committed flag map, and its layout is read from the laid-out page, not the CSS.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hardwire } from './helpers/cli.ts';
import { withPage } from './helpers/chromium.ts';
import { tempDir } from './helpers/tmp.ts';
import { loadFlagMap, siteRef } from '../core/flags/map.ts';
import type { ProveReport } from '../harness/prove/index.ts';

const fixture = (name: string) => join(import.meta.dirname, 'fixtures', 'prove', `${name}.json`);
const FIXTURE = fixture('kube-scheduler');

describe.each(['etcd', 'kube-scheduler'])(
  'hardwire flags prove --html, the %s report',
  (component) => {
    const file = fixture(component);
    const report = JSON.parse(readFileSync(file, 'utf8')) as ProveReport;
    const map = loadFlagMap(component, report.kubernetesVersion);
    const urlOf = new Map(
      map.flags.flatMap((f) => f.consumedAt.map((c) => [siteRef(c), c.url] as const)),
    );

    it('one page with a row per flag and per cited site, each site linked to its line at the tag, readable at 1400 px', async () => {
      const dir = tempDir('hardwire-prove-html-');
      try {
        const out = join(dir, 'prove.html');
        const r = hardwire(['flags', 'prove', '--report', file, '--html', out]);
        expect(r.code, r.stderr).toBe(0);
        await withPage(out, async (page, requests) => {
          expect(await page.locator('h1').innerText()).toBe(`flags prove: ${component}`);
          expect(await page.locator('#summary').innerText()).toContain(
            `${report.counts.sitesHit} of ${report.counts.sites} cited read sites hit`,
          );
          // A row per flag, in the report's order, with its verdict.
          const flagRows = await page
            .locator('#flags tbody tr')
            .evaluateAll((trs) =>
              trs.map((tr) => [
                tr.getAttribute('data-flag'),
                (tr as HTMLTableRowElement).cells[1]!.textContent,
              ]),
            );
          expect(flagRows).toEqual(report.flags.map((f) => [f.flag, f.verdict]));
          // A row per cited site; every link goes where the flag map says that line is.
          const siteRows = await page.locator('#sites tbody tr').evaluateAll((trs) =>
            trs.map((tr) => ({
              ref: tr.getAttribute('data-ref'),
              status: (tr as HTMLTableRowElement).cells[2]!.textContent,
              href: tr.querySelector('a')?.getAttribute('href'),
              text: tr.querySelector('a')?.textContent,
            })),
          );
          expect(siteRows.map((s) => [s.ref, s.status])).toEqual(
            report.flags.flatMap((f) => f.sites.map((s) => [s.ref, s.status])),
          );
          for (const s of siteRows) {
            expect(urlOf.get(s.ref!), s.ref!).toBeDefined();
            expect(s.href, s.ref!).toBe(urlOf.get(s.ref!));
            expect(s.text).toBe(s.ref);
          }
          // A hit shows the value delve read, judged against the flag; a miss says why.
          const rowText = Object.fromEntries(
            await page
              .locator('#flags tbody tr')
              .evaluateAll((trs) =>
                trs.map((tr) => [tr.getAttribute('data-flag'), (tr as HTMLElement).innerText]),
              ),
          );
          for (const f of report.flags) {
            if (f.verdict !== 'hit') expect(rowText[f.flag], f.flag).toContain(f.reason);
            else if (f.seen) expect(rowText[f.flag], f.flag).toContain(f.seen.value.slice(0, 80));
            if (f.seen?.match === true)
              expect(rowText[f.flag], f.flag).toContain('(matches the flag)');
          }
          // Each verdict is painted its own colour, none left unpainted.
          const colours = await page
            .locator('#flags tbody tr')
            .evaluateAll((trs) =>
              trs.map((tr) => [
                tr.className,
                getComputedStyle(tr.querySelector('td.verdict')!).backgroundColor,
              ]),
            );
          const byVerdict = new Map(colours.map(([v, c]) => [v, c]));
          expect(new Set(byVerdict.values()).size).toBe(
            new Set(report.flags.map((f) => f.verdict)).size,
          );
          expect([...byVerdict.values()]).not.toContain('rgba(0, 0, 0, 0)');
          expect(colours.every(([v, c]) => byVerdict.get(v!) === c)).toBe(true);
          // So is each site status (off: ruled out by the unit's own flags), and the summary counts
          // those apart and gives the share hit of the sites not ruled out.
          const siteColours = await page
            .locator('#sites tbody tr')
            .evaluateAll((trs) =>
              trs.map(
                (tr) =>
                  [
                    (tr as HTMLTableRowElement).cells[2]!.textContent!,
                    getComputedStyle(tr.querySelector('td.verdict')!).backgroundColor,
                  ] as const,
              ),
            );
          const byStatus = new Map(siteColours);
          expect(new Set(byStatus.values()).size).toBe(
            new Set(report.flags.flatMap((f) => f.sites.map((s) => s.status))).size,
          );
          expect([...byStatus.values()]).not.toContain('rgba(0, 0, 0, 0)');
          const off = report.flags.flatMap((f) => f.sites).filter((s) => s.status === 'off').length;
          expect(await page.locator('#summary').innerText()).toContain(
            `(${report.counts.sitesNotHit} not hit, ${off} ruled out by the unit's flags, ${report.counts.sitesUnset} without a tracepoint): ${report.counts.sitesHit} of the ${report.counts.sites - off} not ruled out`,
          );
          // At 1400 px: no sideways scroll, and each flag name and each citation on one line.
          const layout = await page.evaluate(() => {
            const lines = (el: Element) => {
              const r = document.createRange();
              r.selectNodeContents(el);
              return new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size;
            };
            const cells = Array.from(document.querySelectorAll('td.flag, td.cite a'));
            return {
              scroll: document.documentElement.scrollWidth,
              cells: cells.length,
              wrapped: cells.filter((c) => lines(c) !== 1).map((c) => c.textContent),
            };
          });
          expect(layout.scroll).toBeLessThanOrEqual(1400);
          expect(layout.cells).toBe(
            report.flags.length * 2 -
              report.flags.filter((f) => f.sites.length === 0).length +
              report.counts.sites * 2,
          );
          expect(layout.wrapped).toEqual([]);
          // Sorting on "hits", twice: the most hit site comes first.
          const sites = page.locator('#sites');
          await sites.locator('th', { hasText: 'hits' }).click();
          await sites.locator('th', { hasText: 'hits' }).click();
          const most = Math.max(...report.flags.flatMap((f) => f.sites.map((s) => s.hits)));
          expect(await sites.locator('tbody tr').first().locator('td').nth(3).innerText()).toMatch(
            new RegExp(`^${most}\\+?$`),
          );
          expect(requests).toEqual([]); // self-contained
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 60_000);
  },
);

describe('hardwire flags prove --report: bad input', () => {
  it('bad input is one line naming the option, exit 2', () => {
    const cases: [string[], RegExp][] = [
      [['--report', '/nonexistent/prove.json'], /^error: --report: .*does not exist/],
      [
        ['--report', FIXTURE, '--html', '/nonexistent-dir/prove.html'],
        /^error: --html: \/nonexistent-dir does not exist; create it/,
      ],
      [['--report', FIXTURE, '--md', '/tmp'], /^error: --md: \/tmp is a directory; name a file/],
      [['--report', FIXTURE, '--html'], /^error: --html: needs a value: --html <file>/],
      [
        ['--report', FIXTURE, '--component', 'etcd'],
        /^error: --component: is etcd, but .* proves kube-scheduler/,
      ],
      [['--report', FIXTURE, '--record'], /^error: --record: /],
      [['--reclassify', '--report', FIXTURE], /^error: --report: does not apply to --reclassify/],
      [
        ['--reclassify', '--component', 'kubelet'],
        /^error: --component: "kubelet" has no record; one of /,
      ],
    ];
    for (const [args, msg] of cases) {
      const r = hardwire(['flags', 'prove', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stderr.trim(), args.join(' ')).toMatch(msg);
    }
  });
});
