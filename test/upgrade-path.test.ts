// upgrade plan (issue 24): the etcd hops, the component order, the refusals (exit 2, one line)
// and the HTML page, read in headless Chromium at 1400 px.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hardwire } from './helpers/cli.ts';
import { withPage } from './helpers/chromium.ts';
import { etcdHops } from '../core/upgrade/etcd.ts';
import { repoRoot } from '../lib/paths.ts';

const MODCACHE = process.env.GOMODCACHE ?? join(homedir(), '.cache', 'hardwire', 'gomod');
const EXAMPLE = join(repoRoot, 'hosts/example.yaml');

function line(ref: string, n: number): string {
  const file = join(MODCACHE, ref);
  if (!existsSync(file)) throw new Error(`${file} is missing: go mod download the module first`);
  return readFileSync(file, 'utf8').split('\n')[n - 1] ?? '';
}

const v = (s: string) => s.replace(/^v/, '').split('.').map(Number) as [number, number, number];

describe('etcd hops', () => {
  it('v3.6.8 → v3.7.0 goes through a 3.6 patch at or above 3.6.11, one minor per hop', () => {
    const hops = etcdHops('v3.6.8', 'v3.7.0');
    expect(hops.map((h) => `${h.from}→${h.to}`)).toEqual(['v3.6.8→v3.6.16', 'v3.6.16→v3.7.0']);
    for (const h of hops) {
      const [a, b] = [v(h.from), v(h.to)];
      expect(b[1] - a[1]).toBeLessThanOrEqual(1);
      // etcd's guide: every member runs 3.6.11 or later before it moves to 3.7.
      if (b[1] === 7) expect(a[1] > 6 || a[2] >= 11, `${h.from} → ${h.to}`).toBe(true);
      expect(h.rules.length).toBeGreaterThan(0);
    }
    expect(hops[0]!.rules.map((r) => r.cite).join(' ')).toContain(
      'content/en/docs/v3.7/upgrades/upgrade_3_7.md:19',
    );
    expect(etcdHops('v3.6.12', 'v3.7.0').map((h) => h.from)).toEqual(['v3.6.12']);
    expect(() => etcdHops('v3.5.20', 'v3.7.0')).toThrow(/skips a minor/);
  });

  it('the cited source lines: kubeadm pins 3.7.0 at v1.37.2; etcd v3.7.0 checks only the minor', () => {
    expect(line('k8s.io/kubernetes@v1.37.2/cmd/kubeadm/app/constants/constants.go', 330)).toContain(
      'DefaultEtcdVersion = "3.7.0-0"',
    );
    expect(line('go.etcd.io/etcd/api/v3@v3.7.0/version/version.go', 28)).toContain(
      'MinClusterVersion = "3.0.0"',
    );
    expect(line('go.etcd.io/etcd/server/v3@v3.7.0/etcdserver/cluster_util.go', 174)).toContain(
      'func allowedVersionRange',
    );
    expect(
      line('k8s.io/kubernetes@v1.37.2/cmd/kubeadm/app/phases/upgrade/staticpods.go', 486),
    ).toContain('performEtcdStaticPodUpgrade(');
    expect(
      line('k8s.io/kubernetes@v1.37.2/cmd/kubeadm/app/phases/upgrade/staticpods.go', 495),
    ).toContain('Upgrade the rest of the control plane components');
  });
});

describe('the plan v1.36.3 → v1.37.2: hops and order in the document', () => {
  const r = hardwire([
    'upgrade',
    'plan',
    '--to',
    'v1.37.2',
    '--offline',
    '--inventory',
    EXAMPLE,
    '--json',
  ]);
  const doc = JSON.parse(r.stdout) as {
    etcd: { from: string; to: string; hops: { from: string; to: string }[] };
    order: { components: string[]; cite: string }[];
  };

  it("etcd from the version table to kubeadm's pin, through 3.6.16", () => {
    expect(doc.etcd).toMatchObject({ from: 'v3.6.8', to: 'v3.7.0' });
    expect(doc.etcd.hops.map((h) => h.to)).toEqual(['v3.6.16', 'v3.7.0']);
  });

  it('etcd, then the apiservers, then the controller-manager and scheduler, each step cited', () => {
    expect(doc.order.map((s) => s.components)).toEqual([
      ['etcd'],
      ['kube-apiserver'],
      ['kube-controller-manager', 'kube-scheduler'],
    ]);
    for (const s of doc.order.slice(1))
      expect(s.cite).toContain('https://kubernetes.io/releases/version-skew-policy/');
  });
});

describe('--html', () => {
  it('one table per component, etcd one per hop; flag names stay on one line at 1400 px, the page does not scroll sideways', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hardwire-upgrade-html-'));
    try {
      const out = join(dir, 'plan.html');
      expect(
        hardwire([
          'upgrade',
          'plan',
          '--to',
          'v1.37.2',
          '--offline',
          '--inventory',
          EXAMPLE,
          '--html',
          out,
          '--quiet',
        ]).code,
      ).toBe(0);
      await withPage(out, async (page) => {
        expect(
          await page
            .locator('section[data-component]')
            .evaluateAll((s) => s.map((x) => x.getAttribute('data-component'))),
        ).toEqual(['etcd', 'etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler']);
        // One line box per name cell: a Range over its text has one client rect per line.
        const lines = await page.locator('td.name').evaluateAll((tds) =>
          tds.map((td) => {
            const r = document.createRange();
            r.selectNodeContents(td);
            return new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size;
          }),
        );
        expect(lines.length).toBeGreaterThan(70);
        expect(lines.filter((n) => n !== 1)).toEqual([]);
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
          1400,
        );
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
