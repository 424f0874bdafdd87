// compare's HTML report at 1400 px (issue 23), with no lab: the report is built by the real
// buildReport from a fixture of three planes whose command lines pass every flag the flag map has for
// each component (so the longest names there are, `--configMapAndSecretChangeDetectionStrategy`'s
// kin, are all on the page), and whose two workers' config files set every config field the map has
// (test/helpers/compare-fixture.ts). The layout is read from the page Chromium laid out, not from the
// CSS. With names this long the page may scroll sideways (the real report's need not:
// test/compare.test.ts checks that).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withPage } from './helpers/chromium.ts';
import { fixtureReport, VERSION } from './helpers/compare-fixture.ts';
import { tempDir } from './helpers/tmp.ts';
import { loadFlagMap } from '../core/flags/map.ts';
import { html } from '../harness/compare/html.ts';
import { COMPONENTS } from '../harness/planes/types.ts';

/** A citation shorter than this is cramped: "validation_linux.go:35" at 11 px monospace is about 150 px. */
const MIN_READ_AT_PX = 150;

describe('compare HTML at 1400 px (fixture report, no lab)', () => {
  const report = fixtureReport();

  it('every flag and config field name on one line, every "read at" citation on one line in a cell at least 150 px wide, k0s\'s node column "no worker"', async () => {
    const dir = tempDir('hardwire-compare-html-');
    const file = join(dir, 'r.html');
    writeFileSync(file, html(report));
    await withPage(file, async (page, requests) => {
      const layout = await page.evaluate((minPx) => {
        const bad: string[] = [];
        let names = 0,
          reads = 0,
          longest = '';
        for (const td of Array.from(
          document.querySelectorAll<HTMLTableCellElement>('table.matrix td.flag'),
        )) {
          const r = document.createRange();
          r.selectNodeContents(td);
          const lh = parseFloat(getComputedStyle(td).lineHeight);
          if (!(lh > 0) || r.getBoundingClientRect().height > lh * 1.5)
            bad.push(
              `${td.textContent}: ${r.getBoundingClientRect().height} px high, line-height ${lh}`,
            );
          if (td.textContent!.length > longest.length) longest = td.textContent!;
          names++;
        }
        for (const td of Array.from(
          document.querySelectorAll<HTMLTableCellElement>('table.matrix td.read'),
        )) {
          reads++;
          const box = td.getBoundingClientRect();
          if (box.width < minPx)
            bad.push(
              `read at cell of ${td.parentElement!.getAttribute('data-flag')} is ${box.width} px wide`,
            );
          for (const a of Array.from(td.querySelectorAll('a'))) {
            if (a.getClientRects().length !== 1) bad.push(`${a.textContent} wraps`);
            if (a.getBoundingClientRect().right > box.right + 0.5)
              bad.push(`${a.textContent} overflows its cell`);
          }
        }
        const noWorker = Array.from(
          document.querySelectorAll('table[data-node] td.vals [data-plane=k0s] .v'),
        ).map((td) => td.textContent);
        return { bad, names, reads, longest, noWorker };
      }, MIN_READ_AT_PX);
      const rows =
        COMPONENTS.reduce((n, c) => n + report.components[c].flags.length, 0) +
        (['kubelet', 'kube-proxy'] as const).reduce(
          (n, c) =>
            n + report.node.components[c].flags.length + report.node.components[c].fields.length,
          0,
        );
      console.log(
        `compare HTML: ${layout.names} names (longest ${layout.longest}), ${layout.reads} read-at cells`,
      );
      expect(layout.names).toBe(rows);
      expect(layout.names).toBeGreaterThan(900);
      expect(layout.reads).toBe(rows);
      expect(layout.bad).toEqual([]);
      expect(layout.noWorker.length).toBeGreaterThan(0);
      expect(new Set(layout.noWorker)).toEqual(new Set(['no worker']));
      expect(requests).toEqual([]);
    });
  }, 120_000);

  it("each node's process tree fits 1400 px: a process with every kube-apiserver flag on its argv wraps in its cell", async () => {
    const dir = tempDir('hardwire-compare-html-');
    const file = join(dir, 'r.html');
    writeFileSync(file, html(report));
    await withPage(file, async (page) => {
      const boxes = await page.evaluate(() =>
        Array.from(document.querySelectorAll<HTMLElement>('table.proc-tree')).map((t) => {
          const pre = Array.from(t.querySelectorAll('pre')).map((p) => p.getBoundingClientRect());
          return {
            right: t.getBoundingClientRect().right,
            widest: Math.max(...pre.map((r) => r.right)),
            lines: Math.max(...pre.map((r) => r.height)),
          };
        }),
      );
      expect(boxes).toHaveLength(3);
      for (const b of boxes) {
        expect(b.right).toBeLessThanOrEqual(1400);
        expect(b.widest).toBeLessThanOrEqual(b.right);
        expect(b.lines).toBeGreaterThan(100); // the long argv wrapped onto many lines
      }
    });
  }, 120_000);

  it("the node rows hold each worker's flags and config fields, cited from the flag map", () => {
    const kubelet = report.node.components.kubelet;
    const map = loadFlagMap('kubelet', VERSION);
    expect(kubelet.flags.map((f) => f.name)).toEqual(map.flags.map((f) => f.name).sort());
    expect(report.node.planes).toEqual({
      hardwire: { host: 'hardwire-node1' },
      kubeadm: { host: 'kubeadm-node1' },
      k0s: { none: 'no worker' },
      yours: { none: 'not collected' },
    });
    const config = kubelet.flags.find((f) => f.name === 'config')!;
    expect(config).toMatchObject({ class: 'same', values: { k0s: null }, inFlagMap: true });
    expect(config.registeredAt?.url).toBe(
      map.flags.find((f) => f.name === 'config')!.registeredAt!.url,
    );
    expect(config.reasons.map((r) => r.plane)).toEqual(['hardwire', 'kubeadm']);
    const x509 = kubelet.fields.find((f) => f.name === 'authentication.x509.clientCAFile')!;
    expect(x509.registeredAt?.file).toBe('config/v1beta1/types.go');
    expect(x509.consumedAt.length).toBeGreaterThan(0);
  });
});
